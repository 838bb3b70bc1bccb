package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine"
	"h3studio/engine/lora/loratest"
)

func TestParseGenerateLoRAAndTurbo(t *testing.T) {
	a, err := parseGenerateArgs([]string{"-d", "m", "-p", "x", "--lora", "a.safetensors", "--lora=/x:y/b.safetensors:0.5:8",
		"--turbo", "6", "--video-shift", "9"})
	if err != nil {
		t.Fatal(err)
	}
	want := []engine.LoRA{{Path: "a.safetensors", Strength: 1}, {Path: "/x:y/b.safetensors", Strength: 0.5, Alpha: 8}}
	if len(a.req.LoRAs) != 2 || a.req.LoRAs[0] != want[0] || a.req.LoRAs[1] != want[1] || a.req.Turbo != 6 || a.req.VideoShift != 9 {
		t.Errorf("parsed %+v", a.req)
	}
	for _, bad := range [][]string{{"--lora", ""}, {"--lora", "a:1000"}, {"--turbo", "0"}, {"--video-shift", "-1"}, {"--audio-shift", "x"}} {
		if _, err := parseGenerateArgs(append([]string{"-d", "m"}, bad...)); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

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
