//go:build !darwin && !linux

package testbackend

import (
	"testing"

	"h3studio/engine/compute"
)

func openMetal(t testing.TB) compute.Backend {
	t.Skip("H3_TEST_BACKEND=metal: no Metal and no MSL-on-CPU harness on this system")
	return nil
}
