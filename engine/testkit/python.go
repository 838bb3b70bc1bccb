package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// PythonPeer is the interpreter of the Python test peers' virtualenv
// (`make deps-python`: $H3_PY_VENV, else ~/.cache/h3studio/venv) once it
// imports module. Without it the test skips, and fails under CI=true,
// where make deps has installed the peers.
func PythonPeer(t testing.TB, module string) string {
	t.Helper()
	venv := os.Getenv("H3_PY_VENV")
	if venv == "" {
		home, _ := os.UserHomeDir()
		venv = filepath.Join(home, ".cache", "h3studio", "venv")
	}
	py := filepath.Join(venv, "bin", "python3")
	if err := exec.Command(py, "-c", "import "+module).Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the Python test peer %s is not importable by %s (make deps-python): %v", module, py, err)
		}
		t.Skipf("the Python test peer %s is not importable by %s (make deps-python)", module, py)
	}
	return py
}
