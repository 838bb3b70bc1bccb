package clocale

import (
	"os"
	"testing"
)

func TestCWithCodeset(t *testing.T) {
	for in, want := range map[string]bool{
		"C.UTF-8": true, "C.utf8": true, "POSIX.UTF-8": true, "C@euro": true,
		"C": false, "POSIX": false, "": false, "en_US.UTF-8": false, "Ca.UTF-8": false, "CC.UTF-8": false,
	} {
		if got := cWithCodeset(in); got != want {
			t.Errorf("cWithCodeset(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestRestore(t *testing.T) {
	old, had := os.LookupEnv("LANGUAGE")
	t.Cleanup(func() {
		if had {
			os.Setenv("LANGUAGE", old)
		} else {
			os.Unsetenv("LANGUAGE")
		}
	})
	os.Setenv("LANGUAGE", "en")
	set = true
	Restore()
	if _, ok := os.LookupEnv("LANGUAGE"); ok || set {
		t.Error("Restore left LANGUAGE set")
	}
	os.Setenv("LANGUAGE", "de")
	Restore() // not set by init: left alone
	if os.Getenv("LANGUAGE") != "de" {
		t.Error("Restore removed a LANGUAGE the user set")
	}
}
