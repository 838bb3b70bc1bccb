package main

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestRender: facts, one row per step (a failure with its exit status and
// failing tests), the row for the forward not yet timed, and each log tail.
func TestRender(t *testing.T) {
	rs := []result{
		{step: steps["check-mac"], OK: true, Elapsed: 61 * time.Second, PeakRSS: 3 << 29, LogTail: "ok  h3studio/darwin"},
		{step: steps["parity"], Exit: 1, Elapsed: 400 * time.Second, Failures: []string{"--- FAIL: TestConformanceMetal/MatMul/bf16_bf16"}, LogTail: "FAIL"},
	}
	got := render([][2]string{{"chip", "Apple M3 Max"}, {"macOS", "15.1 (24B83)"}}, rs)
	for _, want := range []string{
		"| chip | Apple M3 Max |",
		"| make check-mac | passed | 1m1s | 1.50 GiB |",
		"| **failed** (exit 1, 1 failing tests) | 6m40s | — |",
		"timed warm DiT forward at 512²×22 (resident, streaming) | not run",
		"* `--- FAIL: TestConformanceMetal/MatMul/bf16_bf16`",
		"```\nok  h3studio/darwin\n```",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
}

func TestNeedsMacOS(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("runs the steps on macOS")
	}
	var out, errb bytes.Buffer
	if st := run(nil, &out, &errb); st != 2 || !strings.Contains(errb.String(), "needs macOS") {
		t.Fatalf("exit %d: %s", st, errb.String())
	}
}
