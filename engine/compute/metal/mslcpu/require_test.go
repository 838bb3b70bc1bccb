//go:build linux

package mslcpu

import (
	"fmt"
	"strings"
	"testing"
)

type fakeTB struct{ fatal, skip string }

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Fatalf(format string, a ...any) { f.fatal = fmt.Sprintf(format, a...) }
func (f *fakeTB) Skipf(format string, a ...any)  { f.skip = fmt.Sprintf(format, a...) }

// TestRequireFailsInCI: without clang, CI fails the test; elsewhere it skips loudly.
func TestRequireFailsInCI(t *testing.T) {
	var ci fakeTB
	require(&ci, nil, ErrNoCompiler, true)
	if ci.fatal == "" || ci.skip != "" || !strings.Contains(ci.fatal, "clang-19") {
		t.Fatalf("CI=true without clang: fatal %q, skip %q", ci.fatal, ci.skip)
	}
	var dev fakeTB
	require(&dev, nil, ErrNoCompiler, false)
	if dev.skip == "" || dev.fatal != "" {
		t.Fatalf("without CI: fatal %q, skip %q", dev.fatal, dev.skip)
	}
	tc := &Toolchain{}
	if got := require(&fakeTB{}, tc, nil, true); got != tc {
		t.Fatal("a found toolchain was not returned")
	}
}
