//go:build darwin

package main

import (
	"h3studio/engine/compute"
	"h3studio/engine/compute/metal"
)

// openMetal opens the Metal backend on the default GPU: it fails without a
// GPU, with too little GPU memory, or when the shader library does not
// compile (the error names the kernel and line).
func openMetal() (compute.Backend, error) {
	return metal.Open(metal.OpenOptions{MinWorkingSet: minGPUWorkingSet})
}
