package main

import (
	"fmt"
	"runtime"
	"strings"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
)

// deviceInfo describes the compute device H3 Studio runs on (`h3studio
// info`). It reports the CPU backend; on macOS device_darwin.go replaces it
// with the Metal device's name, GPU family and recommended working set.
var deviceInfo = func() compute.DeviceInfo { return cpu.New(cpu.Options{}).Device() }

// deviceDescription is the status bar's device: the compute backend, the
// processor and the memory ("CPU (reference backend) · 2 cores · 24 GB").
func deviceDescription() string {
	backend := "CPU (reference backend)"
	mem, cpu := machine()
	parts := []string{backend}
	if cpu != "" {
		parts = append(parts, cpu)
	}
	parts = append(parts, fmt.Sprintf("%d cores", runtime.NumCPU()))
	if mem > 0 {
		parts = append(parts, fmt.Sprintf("%.0f GB", float64(mem)/(1<<30)))
	}
	return strings.Join(parts, " · ")
}

// memoryBytes is the machine's memory (0 when unknown).
func memoryBytes() int64 {
	m, _ := machine()
	return int64(m)
}
