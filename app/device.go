package main

import (
	"fmt"
	"runtime"
	"strings"
)

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
