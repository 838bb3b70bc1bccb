//go:build darwin

package testbackend

import (
	"errors"
	"testing"

	"h3studio/darwin/mtl"
	"h3studio/engine/compute"
	"h3studio/engine/compute/metal"
)

func openMetal(t testing.TB) compute.Backend {
	b, err := metal.Open(metal.OpenOptions{})
	if errors.Is(err, mtl.ErrNoDevice) {
		t.Skip("H3_TEST_BACKEND=metal: no Metal device on this Mac")
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}
