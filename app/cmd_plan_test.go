package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestPlanCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runPlan([]string{"-canvas", "512x512", "-frames", "22", "-memory", "streaming"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"512×512, 22 frames", "text-encoder", "dit", "1994", "video-vae ", "video-vae-adaptive", "audio-vae", "streaming peak", "GiB"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "resident peak") {
		t.Errorf("-memory streaming printed the resident column")
	}
	for _, bad := range [][]string{
		{"-canvas", "500x512"},
		{"-preset", "ludicrous"},
		{"-reuse", "2", "-core-reuse", "2"},
		{"-layers", "30"},
		{"-memory", "swap"},
		{"-component", "nope"},
		{"-frames", "0"},
		{"-frames", "5"}, // aligns to 5, below one decoder chunk
		{"-text-rows", "0"},
		{"-text-rows", "100000000"},
		{"-preset", "aggressive"}, // not one of generate's presets
	} {
		out.Reset()
		errb.Reset()
		if code := runPlan(bad, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		} else if errb.Len() == 0 {
			t.Errorf("%v: no message on stderr", bad)
		}
	}
}

// TestPlanPresetsAreGenerates: a plan's preset runs the controls the same
// preset runs in generate and the studio (engine.Presets).
func TestPlanPresetsAreGenerates(t *testing.T) {
	for _, c := range []struct{ preset, want string }{
		{"reference", "steps 50, layers 50, reuse 1, core-reuse 1"},
		{"default", "steps 20, layers 50, reuse 1, core-reuse 1"},
		{"fast", "steps 20, layers 50, reuse 2, core-reuse 1"},
		{"preview", "steps 16, layers 40, reuse 3, core-reuse 1"},
	} {
		var out, errb bytes.Buffer
		if code := runPlan([]string{"-canvas", "256x256", "-frames", "22", "-component", "dit", "-preset", c.preset}, &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.preset, code, errb.String())
		}
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("-preset %s: want %q in\n%s", c.preset, c.want, out.String())
		}
	}
}
