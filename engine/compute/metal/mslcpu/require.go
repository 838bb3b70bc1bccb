//go:build linux

package mslcpu

import (
	"os"
)

// TB is the part of testing.TB that Require uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

// Require returns the default toolchain for a test. Without clang it skips
// the test loudly, except under CI (CI=true), where it fails: the emulated
// kernel suite must not quietly stop running.
func Require(t TB) *Toolchain {
	t.Helper()
	tc, err := DefaultToolchain()
	return require(t, tc, err, os.Getenv("CI") == "true")
}

func require(t TB, tc *Toolchain, err error, ci bool) *Toolchain {
	t.Helper()
	if err != nil {
		if ci {
			t.Fatalf("%v: CI=true requires the MSL-on-CPU harness", err)
		} else {
			t.Skipf("%v: skipping the MSL-on-CPU kernels", err)
		}
		return nil
	}
	return tc
}
