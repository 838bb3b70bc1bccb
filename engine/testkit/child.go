package testkit

import (
	"os"
	"os/exec"
	"testing"
)

// RunChild runs the test binary again with only the test named test and
// the environment variable key=value set, for a test that checks what
// happens in a process of its own (a resource limit, a crash); the child's
// failure fails t, naming it, and its output is returned.
func RunChild(t testing.TB, test, key, value string) []byte {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(os.Environ(), key+"="+value)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child %s failed: %v\n%s", test, err, out)
	}
	return out
}

// Names lists the names of dir's entries in order (none when dir cannot
// be read), for the checks that a failed write left nothing behind.
func Names(dir string) []string {
	ents, _ := os.ReadDir(dir)
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	return names
}
