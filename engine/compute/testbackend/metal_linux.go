//go:build linux

package testbackend

import (
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/metal"
	"h3studio/engine/compute/metal/mslcpu"
	"h3studio/shaders"
)

func openMetal(t testing.TB) compute.Backend {
	dev, err := mslcpu.NewDevice(mslcpu.Require(t), shaders.Files(), mslcpu.DeviceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return metal.New(dev, metal.Options{})
}
