package main

import (
	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
)

// deviceInfo describes the compute device H3 Studio runs on. It reports the
// CPU backend; on macOS device_darwin.go replaces it with the Metal device's
// name and recommended working set (the Metal backend fills that hook in).
var deviceInfo = func() compute.DeviceInfo { return cpu.New(cpu.Options{}).Device() }
