package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestQuietUnderCLocale starts this test binary again (it links Fyne and
// app/clocale like h3studio) with Debian's default locale and no
// LANGUAGE, and checks that Fyne logs nothing while the packages
// initialise; with LANGUAGE itself set to a C locale (which clocale leaves
// alone) Fyne's complaint shows, so the check can fail.
func TestQuietUnderCLocale(t *testing.T) {
	start := func(env ...string) string {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", env, err, out)
		}
		return string(out)
	}
	for _, lang := range []string{"LANG=C.UTF-8", "LANG=C.utf8", "LC_ALL=C.UTF-8"} {
		if out := start(lang); strings.Contains(out, "Fyne error") {
			t.Errorf("%s: Fyne logged at start:\n%s", lang, out)
		}
	}
	if out := start("LANG=C.UTF-8", "LANGUAGE=C.UTF-8"); !strings.Contains(out, "Error parsing user locale C") {
		t.Errorf("LANGUAGE=C.UTF-8 did not make Fyne complain, so the check above proves nothing:\n%s", out)
	}
}
