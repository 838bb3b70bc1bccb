package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/lora/loratest"
)

// TestLoRAInspect: h3studio lora inspect prints the format, the targets
// and the alpha; a file that is no LoRA fails naming it.
func TestLoRAInspect(t *testing.T) {
	dir := t.TempDir()
	p := loratest.WritePEFT(t, filepath.Join(dir, "l.safetensors"), map[string]string{"alpha": "1"})
	var out, errb bytes.Buffer
	if rc := runLoRA([]string{"inspect", p}, &out, &errb); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb.String())
	}
	for _, s := range []string{"diffusers/PEFT", "attn.to_q", "rank 2", "alpha    1 (the file's __metadata__ alpha)"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("inspect lacks %q:\n%s", s, out.String())
		}
	}
	out.Reset()
	errb.Reset()
	if rc := runLoRA([]string{"inspect", filepath.Join(dir, "none.safetensors")}, &out, &errb); rc != 1 || !strings.Contains(errb.String(), "none.safetensors") {
		t.Errorf("missing file: rc %d, %q", rc, errb.String())
	}
}
