package studio

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"h3studio/resources"
)

// This file implements the prompt builder for MiniMax-H3's official prompt
// format: the base modes' three sections (integrated description with
// shots, overall soundscape, non-diegetic music) preceded by the keyframe
// alignment line, and Ref2VA's six sections (subject definitions, summary,
// retention analysis, detailed description, soundscape, music) whose label
// lines (<Picture 1>, <Video 1>, <Audio 1>) follow the reference list.

// Builder holds the prompt templates and examples from resources/.
type Builder struct {
	Base, Ref resources.Template
	Examples  []resources.Example
}

// NewBuilder loads the embedded templates and examples.
func NewBuilder() (*Builder, error) {
	ts, err := resources.Templates()
	if err != nil {
		return nil, err
	}
	ex, err := resources.Examples()
	if err != nil {
		return nil, err
	}
	b := &Builder{Examples: ex}
	for _, t := range ts {
		switch t.Name {
		case "base":
			b.Base = t
		case "ref2va":
			b.Ref = t
		}
	}
	if b.Base.Name == "" || b.Ref.Name == "" {
		return nil, fmt.Errorf("studio: prompt templates: want base and ref2va, have %d templates", len(ts))
	}
	return b, nil
}

// Template returns the template that suits a prompt's structure: Ref2VA
// when it has a subject_definitions section, base when it has an
// integrated_multimodal_description section, and nil for free text.
func (b *Builder) Template(prompt string) *resources.Template {
	switch {
	case hasSection(prompt, b.Ref.Fields[0].Name):
		return &b.Ref
	case hasSection(prompt, b.Base.Fields[0].Name):
		return &b.Base
	}
	return nil
}

func sectionRE(name string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^[ \t]*` + regexp.QuoteMeta(name) + `[ \t]*:`)
}

func hasSection(prompt, name string) bool { return sectionRE(name).MatchString(prompt) }

// Sections is a prompt split along a template.
type Sections struct {
	Preamble string            // text before the first section (base: the alignment line)
	Fields   map[string]string // section name → its text, trimmed
}

// Split cuts a prompt into a template's sections. Sections the prompt lacks
// are empty; text that is in no section stays in Preamble.
func Split(prompt string, t resources.Template) Sections {
	type hit struct {
		name       string
		start, end int // of the "name:" header
	}
	var hits []hit
	for _, f := range t.Fields {
		if loc := sectionRE(f.Name).FindStringIndex(prompt); loc != nil {
			hits = append(hits, hit{f.Name, loc[0], loc[1]})
		}
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].start < hits[j].start })
	s := Sections{Fields: map[string]string{}}
	if len(hits) == 0 {
		s.Preamble = strings.TrimSpace(prompt)
		return s
	}
	s.Preamble = strings.TrimSpace(prompt[:hits[0].start])
	for i, h := range hits {
		end := len(prompt)
		if i+1 < len(hits) {
			end = hits[i+1].start
		}
		s.Fields[h.name] = strings.TrimSpace(prompt[h.end:end])
	}
	return s
}

// Join writes sections back in the template's order: inline sections as
// "name: text", the others as "name:" followed by the text on the next line,
// separated by blank lines; a non-empty preamble comes first.
func Join(s Sections, t resources.Template) string {
	var parts []string
	if p := strings.TrimSpace(s.Preamble); p != "" {
		parts = append(parts, p)
	}
	for _, f := range t.Fields {
		v := strings.TrimSpace(s.Fields[f.Name])
		switch {
		case f.Inline:
			parts = append(parts, strings.TrimRight(f.Name+": "+v, " "))
		case v == "":
			parts = append(parts, f.Name+":")
		default:
			parts = append(parts, f.Name+":\n"+v)
		}
	}
	return strings.Join(parts, "\n\n")
}

// Structure turns a prompt into the template's structure. Free text becomes
// the main description (nothing the user wrote is dropped); a prompt that
// already has the template's sections is only re-laid out.
func Structure(prompt string, t resources.Template) string {
	s := Split(prompt, t)
	filled := false
	for _, v := range s.Fields {
		if v != "" {
			filled = true
		}
	}
	if !filled && len(s.Fields) == 0 {
		main := t.Fields[0].Name
		if t.Name == "ref2va" {
			main = "detailed_description"
		}
		text := s.Preamble
		if t.Name == "base" && text != "" && !strings.HasPrefix(text, "[Shot") {
			text = "[Shot 1] " + text
		} else if t.Name == "base" && text == "" {
			text = "[Shot 1] "
		}
		s = Sections{Fields: map[string]string{main: text}}
	}
	if t.Name == "base" {
		// Keep only an alignment line as the preamble; anything else joins
		// the description.
		if s.Preamble != "" && !isAlignment(s.Preamble) {
			d := s.Fields[t.Fields[0].Name]
			s.Fields[t.Fields[0].Name] = strings.TrimSpace(s.Preamble + " " + d)
			s.Preamble = ""
		}
	}
	if v, ok := s.Fields["non_diegetic_music"]; !ok || v == "" {
		s.Fields["non_diegetic_music"] = "N/A"
	}
	return Join(s, t)
}

var (
	alignRE  = regexp.MustCompile(`^(For the target video, at 0\.00 seconds|How the reference pictures align with the target video)`)
	shotRE   = regexp.MustCompile(`\[Shot (\d+)\]`)
	refTagRE = regexp.MustCompile(`<(Picture|Video|Audio) (\d+)>`)
)

func isAlignment(s string) bool { return alignRE.MatchString(strings.TrimSpace(s)) }

// AlignmentLine is the base-mode instruction a keyframe request starts
// with: none for t2va, the first-frame line, the last-frame line, or the
// first-and-last line naming the final shot and the clip's length.
func (b *Builder) AlignmentLine(first, last bool, finalShot, frames int) string {
	secs := fmt.Sprintf("%.2f", Seconds(frames))
	n := strconv.Itoa(finalShot)
	switch {
	case first && last:
		return fmt.Sprintf(b.Base.FirstLast, n, secs)
	case first:
		return b.Base.FirstOnly
	case last:
		return fmt.Sprintf(b.Base.LastOnly, n, secs)
	}
	return ""
}

// FinalShot is the highest [Shot N] in a prompt (1 when there is none).
func FinalShot(prompt string) int {
	n := 1
	for _, m := range shotRE.FindAllStringSubmatch(prompt, -1) {
		if v, err := strconv.Atoi(m[1]); err == nil && v > n {
			n = v
		}
	}
	return n
}

// SyncAlignment keeps a base-format prompt's alignment line in step with
// the keyframe slots and the length: it writes, replaces or removes the
// line. Prompts not in the base format are returned unchanged.
func (b *Builder) SyncAlignment(prompt string, first, last bool, frames int) string {
	if b.Template(prompt) != &b.Base {
		return prompt
	}
	loc := sectionRE(b.Base.Fields[0].Name).FindStringIndex(prompt)
	pre, rest := prompt[:loc[0]], prompt[loc[0]:]
	want := b.AlignmentLine(first, last, FinalShot(rest), frames)
	// Keep any other preamble text; replace only an alignment line.
	var keep []string
	for _, line := range strings.Split(pre, "\n") {
		if strings.TrimSpace(line) != "" && !isAlignment(line) {
			keep = append(keep, line)
		}
	}
	if want != "" {
		keep = append([]string{want}, keep...)
	}
	if len(keep) == 0 {
		return rest
	}
	return strings.Join(keep, "\n") + "\n\n" + rest
}

// Relabel renames reference labels in a prompt all at once (so swapping
// <Picture 1> and <Picture 2> works): from maps an old label ("Picture 1")
// to its new one.
func Relabel(prompt string, from map[string]string) string {
	if len(from) == 0 {
		return prompt
	}
	return refTagRE.ReplaceAllStringFunc(prompt, func(tag string) string {
		if to, ok := from[tag[1:len(tag)-1]]; ok {
			return "<" + to + ">"
		}
		return tag
	})
}

// SyncLabels keeps a Ref2VA prompt's label lines in step with the reference
// labels (in list order): in every label section (subject definitions,
// retention analysis) the lines that start with a reference label are put
// in list order, lines of labels that no longer exist are removed, and a
// starter line is added for each new label. Other lines (<Subject N> …) stay
// where they are. Prompts not in the Ref2VA format are returned unchanged.
func (b *Builder) SyncLabels(prompt string, labels []string) string {
	if b.Template(prompt) != &b.Ref {
		return prompt
	}
	order := map[string]int{}
	for i, l := range labels {
		order[l] = i
	}
	s := Split(prompt, b.Ref)
	changed := false
	for _, f := range b.Ref.Fields {
		if !f.Labels {
			continue
		}
		text := s.Fields[f.Name]
		lines := strings.Split(text, "\n")
		if text == "" {
			lines = nil
		}
		var slots []int                // positions of label lines
		byLabel := map[string]string{} // first line per label
		var out []string
		for _, line := range lines {
			l, ok := leadingLabel(line)
			if !ok {
				out = append(out, line)
				continue
			}
			if _, exists := order[l]; !exists {
				changed = true
				continue // its reference was removed
			}
			if _, dup := byLabel[l]; dup {
				out = append(out, line) // a second line about the same label: leave it
				continue
			}
			byLabel[l] = line
			slots = append(slots, len(out))
			out = append(out, "")
		}
		// Fill the label slots in list order, then append new labels.
		var present []string
		for _, l := range labels {
			if _, ok := byLabel[l]; ok {
				present = append(present, l)
			}
		}
		for i, pos := range slots {
			if out[pos] != byLabel[present[i]] {
				changed = true
			}
			out[pos] = byLabel[present[i]]
		}
		for _, l := range labels {
			if _, ok := byLabel[l]; ok {
				continue
			}
			starter := f.LabelLine
			if strings.HasPrefix(l, LabelAudio) && f.AudioLabelLine != "" {
				starter = f.AudioLabelLine
			}
			line := "<" + l + ">"
			if strings.HasPrefix(starter, ":") {
				line += starter
			} else {
				line += " " + starter
			}
			// New lines go after the last label line, or at the end.
			at := len(out)
			if len(slots) > 0 {
				at = slots[len(slots)-1] + 1
				slots[len(slots)-1] = at
			}
			out = append(out[:at], append([]string{line}, out[at:]...)...)
			changed = true
		}
		s.Fields[f.Name] = strings.Join(out, "\n")
	}
	if !changed {
		return prompt
	}
	return Join(s, b.Ref)
}

// leadingLabel returns the reference label a line starts with.
func leadingLabel(line string) (string, bool) {
	t := strings.TrimSpace(line)
	m := refTagRE.FindStringSubmatchIndex(t)
	if m == nil || m[0] != 0 {
		return "", false
	}
	return t[1 : m[1]-1], true
}
