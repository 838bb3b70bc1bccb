package metal

import (
	"strings"
	"testing"
)

func TestShaderError(t *testing.T) {
	e := NewShaderError("Compilation failed:\nnorm.metal:31:11: error: use of undeclared identifier 'ss2'\ncommon.h:3:1: warning: meh\n")
	msg := e.Error()
	if !strings.Contains(msg, "norm.metal:31:11: error: use of undeclared identifier 'ss2' (in kernel_rms_norm)") {
		t.Fatalf("message %q does not name the file, line and kernel", msg)
	}
	if strings.Contains(msg, "warning") {
		t.Fatalf("warnings in %q", msg)
	}
	if !strings.Contains(NewShaderError("internal compiler failure").Error(), "internal compiler failure") {
		t.Fatal("a log without diagnostics is lost")
	}
}
