// Package clocale keeps Fyne quiet under a C locale with a codeset.
//
// Debian's default locale is LANG=C.UTF-8. Fyne's lang package reads the
// user's locale in its init through github.com/jeandeaual/go-locale, which
// passes "C.UTF-8" on as the language "C" (it only recognises a bare "C"
// or "POSIX" as no language); Fyne then fails to parse "C" and logs
// "Fyne error: Error parsing user locale C" on every start of the binary,
// every subcommand included. go-locale consults $LANGUAGE first when the
// locale is not a bare C, so this package's init — which runs before
// Fyne's: it imports only "os", so it is ready, and by the specification's
// order (import path, then readiness) initialized, before fyne.io/fyne/v2/lang,
// whose imports are many — sets LANGUAGE=en for exactly that case: LANGUAGE
// unset and the effective locale a C or POSIX locale with a codeset.
// Restore, called first thing in main, takes it back out, so nothing the
// program starts sees a changed environment. app/clocale_test.go runs the
// built binary under LANG=C.UTF-8 to check that nothing is logged.
//
// A C locale names no language, so English (Fyne's fallback anyway) is
// what it means; nothing else changes.
package clocale

import "os"

// set records that init set LANGUAGE.
var set bool

func init() {
	if _, ok := os.LookupEnv("LANGUAGE"); ok {
		return
	}
	locale := ""
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} { // go-locale's order
		if v := os.Getenv(k); v != "" {
			locale = v
			break
		}
	}
	if !cWithCodeset(locale) {
		return
	}
	set = os.Setenv("LANGUAGE", "en") == nil
}

// cWithCodeset reports whether locale is C or POSIX with a codeset or
// modifier ("C.UTF-8", "C.utf8", "POSIX.UTF-8@euro").
func cWithCodeset(locale string) bool {
	for _, p := range []string{"C", "POSIX"} {
		if len(locale) > len(p) && locale[:len(p)] == p && (locale[len(p)] == '.' || locale[len(p)] == '@') {
			return true
		}
	}
	return false
}

// Restore unsets LANGUAGE if init set it (Fyne has read it by then).
func Restore() {
	if set {
		os.Unsetenv("LANGUAGE")
		set = false
	}
}
