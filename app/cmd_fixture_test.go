package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestFixtureQuantFlag checks --quant's parsing: an unknown format is a
// usage error naming the flag, and a family without quantized weights
// refuses int8 before computing anything.
func TestFixtureQuantFlag(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.safetensors")
	base := []string{"-d", t.TempDir(), "-i", "fixture/testdata/layouts.safetensors", "-o", out}
	for _, c := range []struct {
		quant string
		code  int
		want  string
	}{
		{"int3", 2, "--quant"},
		{"int8x", 2, "--quant"},
		{"int8", 1, "dit_* families"},
	} {
		var stdout, stderr bytes.Buffer
		code := runFixture(append(base, "--quant", c.quant), &stdout, &stderr)
		if code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("--quant %s: exit %d, stderr %q; want exit %d naming %q", c.quant, code, stderr.String(), c.code, c.want)
		}
	}
}
