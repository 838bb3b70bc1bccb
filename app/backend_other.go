//go:build !darwin

package main

import (
	"errors"

	"h3studio/engine/compute"
)

// openMetal fails: Metal exists only on macOS (on Linux the Metal kernels
// run only inside the test harness, `make test-kernels`).
func openMetal() (compute.Backend, error) {
	return nil, errors.New("the Metal backend needs macOS")
}
