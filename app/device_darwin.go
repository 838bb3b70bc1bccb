package main

import (
	"golang.org/x/sys/unix"

	"h3studio/engine/compute"
)

// On macOS the compute device is the Apple GPU through Metal: info reports
// the MTLDevice's name, GPU family and recommendedMaxWorkingSetSize, or the
// CPU with the reason the GPU is not used.
func init() {
	cpuInfo := deviceInfo
	deviceInfo = func() compute.DeviceInfo {
		b, err := openMetal()
		if err != nil {
			d := cpuInfo()
			d.Name += "; Metal not used: " + err.Error()
			return d
		}
		defer b.Close()
		return b.Device()
	}
}

// machine returns the memory size and the processor's name.
func machine() (uint64, string) {
	mem, _ := unix.SysctlUint64("hw.memsize")
	cpu, _ := unix.Sysctl("machdep.cpu.brand_string")
	return mem, cpu
}
