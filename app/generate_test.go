package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine"
)

func TestParseGenerateArgsKeepsReferenceOrder(t *testing.T) {
	a, err := parseGenerateArgs([]string{"-d", "m", "-p", "x", "--ref-audio", "a.wav", "--ref-image=i.png",
		"--ref-video-audio", "v.mp4", "s.m4a", "--ref-silent-video", "q.mov", "--ref-video", "w.mp4", "-o", "", "--seed", "0"})
	if err != nil {
		t.Fatal(err)
	}
	want := []engine.Reference{{Kind: engine.RefAudio, Path: "a.wav"}, {Kind: engine.RefImage, Path: "i.png"},
		{Kind: engine.RefVideoAudio, Path: "v.mp4", Audio: "s.m4a"}, {Kind: engine.RefSilentVideo, Path: "q.mov"},
		{Kind: engine.RefVideo, Path: "w.mp4"}}
	if len(a.req.References) != len(want) {
		t.Fatalf("references %+v", a.req.References)
	}
	for i := range want {
		if a.req.References[i] != want[i] {
			t.Errorf("reference %d = %+v, want %+v", i, a.req.References[i], want[i])
		}
	}
	if a.output != "" || !a.req.SeedSet || a.req.Seed != 0 {
		t.Errorf("output %q seed %v/%d", a.output, a.req.SeedSet, a.req.Seed)
	}
	labels := engine.ReferenceLabels(a.req.References)
	got := []string{}
	for _, l := range labels {
		got = append(got, l.Label)
	}
	if strings.Join(got, ",") != "Audio 1,Picture 1,Video 1,Video 2,Video 3" {
		t.Errorf("labels %v", got)
	}
}

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

func TestParseGenerateArgsErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--frames", "22", "--seconds", "2"},
		{"--width", "abc"},
		{"--ref-video-audio", "v.mp4"},
		{"--bogus"},
		{"stray"},
		{"--seconds", "-1"},
	} {
		if _, err := parseGenerateArgs(args); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
	// The engine reads a zero as "not given"; on the command line an
	// explicit 0 is out of range and refused with the rule (h3.c does too).
	for flag, rule := range map[string]string{
		"--steps": "steps 0 is outside 2..1000", "--reuse": "reuse 0 is outside 1..3",
		"--core-reuse": "core-reuse 0 is outside 1..6", "--layers": "layers 0 is outside 35..50",
		"--frames": "frames 0 aligns up to 5 frames, outside 22..362", "--width": "width 0 must be a multiple of 32",
		"--height": "height 0 must be a multiple of 32",
	} {
		_, err := parseGenerateArgs([]string{"-d", "m", flag, "0"})
		if err == nil || !strings.Contains(err.Error(), rule) {
			t.Errorf("%s 0: got %v, want an error naming %q", flag, err, rule)
		}
	}
	a, err := parseGenerateArgs(nil)
	if err != nil || a.output != "outputs/h3.mp4" {
		t.Errorf("default output %q, %v", a.output, err)
	}
}

// TestPromptFile: --prompt-file PATH and - (standard input) give the text
// -p "$(cat PATH)" gives; both at once, a file past the bound and non-UTF-8
// text are refused.
func TestPromptFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "prompt.txt")
	os.WriteFile(p, []byte("A red fox.\nSoft wind.\r\n\n"), 0o644)
	for _, src := range []string{p, "-"} {
		a := generateArgs{promptFile: src}
		if err := readPromptFile(&a, strings.NewReader("A red fox.\nSoft wind.\n")); err != nil || a.req.Prompt != "A red fox.\nSoft wind." {
			t.Errorf("%s: %q, %v", src, a.req.Prompt, err)
		}
	}
	big := filepath.Join(dir, "big.txt")
	os.WriteFile(big, []byte(strings.Repeat("a", maxPromptFileBytes+1)), 0o644)
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte{0xff, 0xfe}, 0o644)
	for name, a := range map[string]generateArgs{
		"both":    {promptFile: p, req: reqWithPrompt("x")},
		"big":     {promptFile: big},
		"binary":  {promptFile: bad},
		"missing": {promptFile: filepath.Join(dir, "nope")},
	} {
		if err := readPromptFile(&a, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func reqWithPrompt(p string) (r engine.Request) { r.Prompt = p; return r }

func TestProgressPlainLines(t *testing.T) {
	var buf bytes.Buffer
	p := newProgressPrinter(&buf)
	p.Event(engine.Event{Phase: engine.PhaseDenoise, Done: 0, Total: 4})
	p.Event(engine.Event{Phase: engine.PhaseDenoise, Done: 1, Total: 4})
	p.Event(engine.Event{Phase: engine.PhaseDenoise, Done: 1, Total: 4}) // duplicate: no line
	p.Event(engine.Event{Phase: engine.PhaseVideoDecode, Done: 1, Total: 2})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "denoise") || !strings.Contains(lines[2], "1/2") {
		t.Errorf("lines: %q", lines)
	}
}

// FuzzParseGenerateArgs: any argument list parses or fails with an error,
// never a panic, and references keep their count and order.
func FuzzParseGenerateArgs(f *testing.F) {
	f.Add("-d\x00m\x00-p\x00x\x00--ref-video-audio\x00v.mp4\x00s.wav\x00--seconds\x002.5")
	f.Add("--width=256\x00--frames\x0022\x00--seed\x0018446744073709551615\x00-o\x00")
	f.Add("--ref-image\x00--ref-audio\x00--ref-video-audio\x00x")
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		a, err := parseGenerateArgs(args)
		if err != nil {
			return
		}
		n := 0
		for _, s := range args {
			name, _, _ := strings.Cut(strings.TrimLeft(s, "-"), "=")
			if strings.HasPrefix(s, "-") && strings.HasPrefix(name, "ref-") && name != "ref-image-size" && name != "ref-video-canvas" {
				n++
			}
		}
		if len(a.req.References) > n {
			t.Errorf("%q: %d references from %d flags", args, len(a.req.References), n)
		}
	})
}

// TestOutputsThatOverwriteEachOther: outputs that would land on the same
// file (the MP4 on its own sidecar, the WAV on the sidecar or the MP4, a
// frames folder on the MP4) are an invalid request, refused before
// anything is opened or created.
func TestOutputsThatOverwriteEachOther(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", p("x.json")}, "-o and the sidecar"},
		{[]string{"-o", p("a.mp4"), "--wav", p("a.json")}, "--wav and the sidecar"},
		{[]string{"-o", p("a.mp4"), "--wav", p("A.MP4")}, "-o and --wav"},
		{[]string{"-o", p("v"), "--frames-dir", p("sub/../v")}, "-o and --frames-dir"},
		{[]string{"-o", "", "--wav", p("take.json")}, "--wav and the sidecar"},
		{[]string{"-o", p("x.mp4"), "--frames-dir", p("f"), "--wav", p("f/take.json")}, "--wav and the frames folder's take.json"},
	} {
		var out bytes.Buffer
		args := append([]string{"generate", "-d", p("no-model"), "-p", "x"}, c.args...)
		if code := run(args, &out, &out); code != 2 || !strings.Contains(out.String(), c.want) {
			t.Errorf("%v: exit %d: %s (want 2 naming %q)", c.args, code, out.String(), c.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("refused requests created %v", ents)
	}
	for _, ok := range [][]string{
		{"-o", "out/take.mp4", "--wav", "out/take.wav", "--frames-dir", "out/frames"},
		{"-o", "", "--frames-dir", "f", "--wav", "f/sound.wav"},
	} {
		a, err := parseGenerateArgs(ok)
		if err != nil || checkOutputs(a) != nil {
			t.Errorf("%v: %v / %v", ok, err, checkOutputs(a))
		}
	}
}
