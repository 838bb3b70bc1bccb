package studio

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"h3studio/engine"
)

// LoRAChoice is one LoRA of the draft's library: a file with its strength,
// switched on or off for the next take. The library travels with the
// settings (remembered between sessions) and with each take (Re-run
// restores it).
type LoRAChoice struct {
	Path     string  `json:"path"`
	Strength float64 `json:"strength"`
	On       bool    `json:"on"`
	// Summary describes the file ("diffusers/PEFT, 312 modules, rank 128,
	// 1.29 GiB"); Problem says why it cannot be used (empty when it can).
	Summary string `json:"-"`
	Problem string `json:"-"`
}

// Name is the file's base name.
func (l LoRAChoice) Name() string { return filepath.Base(l.Path) }

// Strength limits of the studio's slider (the engine accepts −100..100).
const (
	MinLoRAStrength = -2.0
	MaxLoRAStrength = 2.0
)

// TurboChoices are the Turbo toggle's settings: off, then 4, 6 and 8
// passes (6–8 look clearly better than 4).
var TurboChoices = []int{0, 4, 6, 8}

// IsLoRAFile reports whether a dropped file goes to the LoRA library.
func IsLoRAFile(path string) bool { return strings.EqualFold(filepath.Ext(path), ".safetensors") }

// inspectLoRA fills a choice's Summary or Problem from the file's header.
func inspectLoRA(l LoRAChoice) LoRAChoice {
	info, err := engine.InspectLoRA(l.Path)
	if err != nil {
		l.Summary, l.Problem = "", err.Error()
		return l
	}
	l.Summary, l.Problem = info.Summary(), ""
	return l
}

// AddLoRAs adds LoRA files to the library, switched on at strength 1; a
// file already there is switched on. A file that is not a MiniMax-H3 LoRA
// is refused with a notice naming it and why. Files are read (their
// headers only) before the draft changes.
func (c Compose) AddLoRAs(paths []string) {
	var add []LoRAChoice
	for _, p := range paths {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		l := inspectLoRA(LoRAChoice{Path: p, Strength: 1, On: true})
		if l.Problem != "" {
			c.s.Notify(Warn, fmt.Sprintf("%s is not a LoRA H3 Studio can use: %s", l.Name(), l.Problem))
			continue
		}
		add = append(add, l)
	}
	if len(add) == 0 {
		return
	}
	c.s.editDraft(func(d *Draft) {
		for _, l := range add {
			if i := loraIndex(d.Settings.LoRAs, l.Path); i >= 0 {
				d.Settings.LoRAs[i].On, d.Settings.LoRAs[i].Summary, d.Settings.LoRAs[i].Problem = true, l.Summary, ""
				continue
			}
			d.Settings.LoRAs = append(d.Settings.LoRAs, l)
		}
	})
}

func loraIndex(ls []LoRAChoice, path string) int {
	for i, l := range ls {
		if l.Path == path {
			return i
		}
	}
	return -1
}

// editLoRA changes the library entry of path (nothing when absent).
func (c Compose) editLoRA(path string, fn func(l *LoRAChoice)) {
	c.s.editDraft(func(d *Draft) {
		if i := loraIndex(d.Settings.LoRAs, path); i >= 0 {
			ls := append([]LoRAChoice(nil), d.Settings.LoRAs...)
			fn(&ls[i])
			d.Settings.LoRAs = ls
		}
	})
}

// RemoveLoRA takes a file out of the library.
func (c Compose) RemoveLoRA(path string) {
	c.s.editDraft(func(d *Draft) {
		if i := loraIndex(d.Settings.LoRAs, path); i >= 0 {
			d.Settings.LoRAs = append(append([]LoRAChoice(nil), d.Settings.LoRAs[:i]...), d.Settings.LoRAs[i+1:]...)
		}
	})
}

// SetLoRAOn switches a library LoRA on or off for the next take.
func (c Compose) SetLoRAOn(path string, on bool) { c.editLoRA(path, func(l *LoRAChoice) { l.On = on }) }

// SetLoRAStrength sets a library LoRA's strength, clamped to the slider's
// range and rounded to 0.05.
func (c Compose) SetLoRAStrength(path string, v float64) {
	if math.IsNaN(v) {
		return
	}
	v = math.Round(min(max(v, MinLoRAStrength), MaxLoRAStrength)*20) / 20
	c.editLoRA(path, func(l *LoRAChoice) { l.Strength = v })
}

// SetTurbo sets the Turbo preset: 0 (off), 4, 6 or 8 passes. With Turbo on,
// the preset's speed controls give way to the Turbo preset's (unless they
// were changed by hand under Advanced).
func (c Compose) SetTurbo(passes int) {
	ok := false
	for _, t := range TurboChoices {
		ok = ok || t == passes
	}
	if !ok {
		return
	}
	c.s.editDraft(func(d *Draft) { d.Settings.Turbo = passes })
}

// loraRequest is the engine's list of the switched-on LoRAs.
func (st Settings) loraRequest() []engine.LoRA {
	var out []engine.LoRA
	for _, l := range st.LoRAs {
		if l.On {
			out = append(out, engine.LoRA{Path: l.Path, Strength: l.Strength})
		}
	}
	return out
}

// TurboNote is the line under the Turbo toggle: what the preset does and,
// when no LoRA is on, that it needs one.
func TurboNote(st Settings) string {
	if st.Turbo == 0 {
		return "Off: the quality preset's passes."
	}
	n := fmt.Sprintf("%d passes, Euler, shift %s/3, no reuse.", st.Turbo, turboShiftText(st.Width, st.Height))
	if len(st.loraRequest()) == 0 {
		n += " Switch on a Turbo LoRA: the base model is blurry at so few passes."
	}
	return n
}

func turboShiftText(w, h int) string {
	if min(w, h) >= 700 {
		return "6"
	}
	return "12"
}
