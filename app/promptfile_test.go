package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine"
)

// TestPromptFile: --prompt-file PATH and - (standard input) give the text
// -p "$(cat PATH)" gives; both at once, a file past the bound and non-UTF-8
// text are refused.
func TestPromptFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "prompt.txt")
	os.WriteFile(p, []byte("A red fox.\nSoft wind.\r\n\n"), 0o644)
	for _, src := range []string{p, "-"} {
		a := generateArgs{promptFile: src}
		if err := readPromptFile(&a, strings.NewReader("A red fox.\nSoft wind.\n")); err != nil || a.req.Prompt != "A red fox.\nSoft wind." {
			t.Errorf("%s: %q, %v", src, a.req.Prompt, err)
		}
	}
	big := filepath.Join(dir, "big.txt")
	os.WriteFile(big, []byte(strings.Repeat("a", maxPromptFileBytes+1)), 0o644)
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte{0xff, 0xfe}, 0o644)
	for name, a := range map[string]generateArgs{
		"both":    {promptFile: p, req: reqWithPrompt("x")},
		"big":     {promptFile: big},
		"binary":  {promptFile: bad},
		"missing": {promptFile: filepath.Join(dir, "nope")},
	} {
		if err := readPromptFile(&a, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func reqWithPrompt(p string) (r engine.Request) { r.Prompt = p; return r }
