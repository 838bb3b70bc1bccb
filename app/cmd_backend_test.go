package main

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

func TestBackendCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if st := run([]string{"backend", "-b", "cpu"}, &out, &errb); st != 0 {
		t.Fatalf("backend -b cpu: status %d: %s", st, errb.String())
	}
	if !strings.Contains(out.String(), "backend:     cpu") {
		t.Fatalf("output:\n%s", out.String())
	}
	out.Reset()
	if st := run([]string{"backend", "-json"}, &out, &errb); st != 0 {
		t.Fatalf("backend -json: status %d: %s", st, errb.String())
	}
	var info struct{ Backend, Note string }
	if err := json.Unmarshal(out.Bytes(), &info); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "darwin" && (info.Backend != "cpu" || !strings.Contains(info.Note, "Metal backend needs macOS")) {
		t.Fatalf("auto on %s: %+v; want the CPU with the reason", runtime.GOOS, info)
	}
	if st := run([]string{"backend", "-b", "tpu"}, &out, &errb); st != 1 || !strings.Contains(errb.String(), `unknown backend "tpu"`) {
		t.Fatalf("unknown backend: status %d, %q", st, errb.String())
	}
}
