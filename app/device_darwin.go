//go:build darwin

package main

import "h3studio/engine/compute"

// On macOS the compute device is the Apple GPU through Metal. Until the
// Metal backend (engine/compute/metal, darwin/mtl) lands, this hook keeps the
// CPU description and says that the GPU is not queried yet; the Metal work
// replaces the body with the MTLDevice's name, recommendedMaxWorkingSetSize
// and GPU family.
func init() {
	cpuInfo := deviceInfo
	deviceInfo = func() compute.DeviceInfo {
		d := cpuInfo()
		d.Name += "; Metal device not queried (Metal backend not built in yet)"
		return d
	}
}
