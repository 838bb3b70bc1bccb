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
