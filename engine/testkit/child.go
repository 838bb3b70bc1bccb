package testkit

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Tool is the path of the program name (ffmpeg, ffprobe, node: what
// `make deps` installs for the tests). Without it the test skips loudly,
// and fails under CI=true, where make deps has installed it.
func Tool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing on CI (make deps installs it)", name)
		}
		t.Skipf("SKIP: %s is not installed (make deps installs it)", name)
	}
	return path
}

// Output runs the program name with args and returns what it writes to
// standard output; a failed run fails the test with the command and what
// it wrote to standard error.
func Output(t testing.TB, name string, args ...string) []byte {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

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
