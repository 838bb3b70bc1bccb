//go:build darwin

package main

import (
	"h3studio/engine/compute"
	"h3studio/engine/compute/metal"
)

// On macOS the compute device is the Apple GPU through Metal: report the
// MTLDevice's name, GPU family, memory and recommended working set (without
// compiling the shaders). Without a GPU, keep the CPU description and say why.
func init() {
	cpuInfo := deviceInfo
	deviceInfo = func() compute.DeviceInfo {
		d, err := metal.DeviceFacts()
		if err != nil {
			d = cpuInfo()
			d.Name += "; no Metal GPU: " + err.Error()
		}
		return d
	}
}
