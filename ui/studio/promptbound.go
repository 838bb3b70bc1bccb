package studio

import (
	"fmt"
	"os"
	"path/filepath"
	"unicode/utf8"
)

// MaxPromptRunes bounds the prompt: far past any prompt the model is
// written for (the released prompts are a few thousand characters; the
// text encoder's 262,144-token window is shared with the references), and
// small enough that the text entry stays responsive (a 1 MB paste froze it
// for minutes).
const MaxPromptRunes = 32 << 10

// CutPromptFolder is the library's folder for the whole text of prompts
// that were cut to MaxPromptRunes.
const CutPromptFolder = "Cut prompt text"

// boundPrompt cuts p to MaxPromptRunes characters.
func boundPrompt(p string) (string, bool) {
	if len(p) <= MaxPromptRunes || utf8.RuneCountInString(p) <= MaxPromptRunes {
		return p, false
	}
	n := 0
	for i := range p {
		if n == MaxPromptRunes {
			return p[:i], true
		}
		n++
	}
	return p, false
}

// boundPromptLocked cuts the prompt of a draft that is about to become
// Compose's to MaxPromptRunes, keeping the whole text (keepCutPromptLocked):
// every way a prompt comes in (typing, a paste, a take's settings, the
// draft restored at start) is bounded, so the prompt entry never gets a
// text it can't lay out quickly.
func (s *Studio) boundPromptLocked(d *Draft) {
	if bounded, cut := boundPrompt(d.Prompt); cut {
		s.keepCutPromptLocked(d.Prompt)
		d.Prompt = bounded
	}
}

// keepCutPromptLocked saves the whole text of a prompt that was cut, in the
// library's CutPromptFolder (on a worker), and says where.
func (s *Studio) keepCutPromptLocked(full string) {
	dir := filepath.Join(s.lib.Dir, CutPromptFolder)
	name := s.opts.Now().Format("2006-01-02 15.04.05")
	total := utf8.RuneCountInString(full)
	s.opts.Go(func() {
		msg := fmt.Sprintf("The prompt holds at most %d characters, so the %d-character text was cut there.", MaxPromptRunes, total)
		path, err := writeNew(dir, name, ".txt", []byte(full))
		if err != nil {
			s.Notify(Warn, msg+" The whole text could not be kept ("+err.Error()+"): Edit ▸ Undo Draft Change goes back to the prompt before it.")
			return
		}
		s.Notify(Warn, msg+" The whole text is kept in "+path+".")
	})
}

// writeNew writes data to a new file dir/name.ext (name-2.ext … when taken),
// never replacing a file.
func writeNew(dir, name, ext string, data []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for i := 1; ; i++ {
		p := filepath.Join(dir, name+ext)
		if i > 1 {
			p = filepath.Join(dir, fmt.Sprintf("%s-%d%s", name, i, ext))
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if os.IsExist(err) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(p)
			return "", err
		}
		return p, nil
	}
}
