//go:build darwin

package main

import (
	"golang.org/x/sys/unix"

	"h3studio/engine/compute"
	"h3studio/engine/compute/metal"
)

// On macOS the compute device is the Apple GPU through Metal: info reports
// the MTLDevice's name, GPU family, memory and recommended working set
// (read without compiling the shaders), or the CPU with the reason the GPU
// is not used.
func init() {
	cpuInfo := deviceInfo
	deviceInfo = func() compute.DeviceInfo {
		d, err := metal.DeviceFacts()
		if err != nil {
			d = cpuInfo()
			d.Name += "; Metal not used: " + err.Error()
		}
		return d
	}
}

// machine returns the memory size and the processor's name.
func machine() (uint64, string) {
	mem, _ := unix.SysctlUint64("hw.memsize")
	cpu, _ := unix.Sysctl("machdep.cpu.brand_string")
	return mem, cpu
}
