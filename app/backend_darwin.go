//go:build darwin

package main

import (
	"h3studio/engine/compute"
	"h3studio/engine/compute/metal"
)

// minGPUWorkingSet is the smallest recommended working set the Metal backend
// accepts: below it not even the streaming modes fit (two DiT blocks, the
// activations of a 512² request and one text-encoder layer).
const minGPUWorkingSet = 4 << 30

// openMetal opens the Metal backend on the default GPU: it fails without a
// GPU, with too little GPU memory, or when the shader library does not
// compile (the error names the kernel and line).
func openMetal() (compute.Backend, error) {
	return metal.Open(metal.OpenOptions{MinWorkingSet: minGPUWorkingSet})
}
