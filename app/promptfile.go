package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// maxPromptFileBytes bounds --prompt-file: four bytes for each of the
// 262,144 tokens the text encoder takes (prompt.DefaultMaxTokens) is more
// than any prompt the model can read; the engine refuses a prompt past its
// token limit with the exact count.
const maxPromptFileBytes = 1 << 20

// readPromptFile fills the prompt from --prompt-file (stdin for "-"). The
// text is the file's, less its trailing line ends, so that
// --prompt-file f equals -p "$(cat f)".
func readPromptFile(a *generateArgs, stdin io.Reader) error {
	if a.promptFile == "" {
		return nil
	}
	if a.req.Prompt != "" {
		return fmt.Errorf("invalid request: -p and --prompt-file are mutually exclusive")
	}
	r, name := stdin, "standard input"
	if a.promptFile != "-" {
		f, err := os.Open(a.promptFile)
		if err != nil {
			return fmt.Errorf("--prompt-file: %w", err)
		}
		defer f.Close()
		r, name = f, a.promptFile
	}
	b, err := io.ReadAll(io.LimitReader(r, maxPromptFileBytes+1))
	if err != nil {
		return fmt.Errorf("--prompt-file %s: %w", name, err)
	}
	if len(b) > maxPromptFileBytes {
		return fmt.Errorf("invalid request: --prompt-file %s is over %d bytes, more than the model can read", name, maxPromptFileBytes)
	}
	if !utf8.Valid(b) {
		return fmt.Errorf("invalid request: --prompt-file %s is not UTF-8 text", name)
	}
	a.req.Prompt = strings.TrimRight(string(b), "\r\n")
	return nil
}
