package snapshot

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestReportText: the people's report of a complete, a partial, a corrupt
// and a demo snapshot — its name, the tasks it can run, why not, and what
// the text says.
func TestReportText(t *testing.T) {
	for _, c := range []struct {
		name     string
		make     func(t *testing.T, root string)
		title    string
		tasks    []Task
		unusable string // a fragment of Unusable(); "" when usable
		want     []string
	}{
		{"complete", func(t *testing.T, root string) {
			partition(t, root, FL2VA, true)
			partition(t, root, Ref2VA, true)
		}, "MiniMax-H3 FL2VA + Ref2VA", []Task{T2VA, FL2VAT, Ref2VAT}, "",
			[]string{"MiniMax-H3 snapshot\n", "original release layout", "FL2VA: FL2VA/model_index.json, tasks t2va, fl2va",
				"FL2VA/transformer", "Ref2VA/audio_vae", "t2va    available (FL2VA partition)", "ref2va  available (Ref2VA partition)", "total: "}},
		{"FL2VA only", func(t *testing.T, root string) { partition(t, root, FL2VA, true) },
			"MiniMax-H3 FL2VA", []Task{T2VA, FL2VAT}, "",
			[]string{"ref2va  unavailable (Ref2VA partition): missing transformer", "Missing components:", "disables ref2va"}},
		{"no text encoder", func(t *testing.T, root string) { partition(t, root, FL2VA, false) },
			"MiniMax-H3 snapshot (incomplete)", nil, "missing tokenizer, text encoder",
			[]string{"t2va    unavailable (FL2VA partition): missing tokenizer, text encoder"}},
		{"corrupt", func(t *testing.T, root string) {
			partition(t, root, FL2VA, true)
			writeFile(t, filepath.Join(root, "FL2VA", "audio_vae", "model.safetensors"), "garbage")
		}, "MiniMax-H3 snapshot (incomplete)", nil, "corrupt audio VAE",
			[]string{"CORRUPT: ", "Corrupt files:", "audio_vae/model.safetensors"}},
		{"demo", func(t *testing.T, root string) {
			partition(t, root, FL2VA, true)
			editJSON(t, root+"/FL2VA/model_index.json", "_h3studio", map[string]any{"demo": true, "name": "Tiny demo"})
		}, "Tiny demo", []Task{T2VA, FL2VAT}, "", []string{"Tiny demo — not the released model\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			c.make(t, root)
			r, err := Inspect(root)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Name(); got != c.title {
				t.Errorf("Name %q, want %q", got, c.title)
			}
			if got := r.AvailableTasks(); strings.Join(taskStrings(got), ",") != strings.Join(taskStrings(c.tasks), ",") {
				t.Errorf("AvailableTasks %v, want %v", got, c.tasks)
			}
			u := r.Unusable()
			if (c.unusable == "") != (u == "") || !strings.Contains(u, c.unusable) {
				t.Errorf("Unusable %q, want %q", u, c.unusable)
			}
			text := r.Text()
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("text lacks %q:\n%s", w, text)
				}
			}
			var b strings.Builder
			r.WriteText(&b)
			if b.String() != text {
				t.Error("WriteText and Text differ")
			}
		})
	}
}

func taskStrings(ts []Task) []string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return s
}

// TestReportTextStable: two inspections of one folder give the same text
// (the scheduler map is printed in name order).
func TestReportTextStable(t *testing.T) {
	root := t.TempDir()
	diffusersRoot(t, root)
	var first string
	for i := 0; i < 5; i++ {
		r, err := Inspect(root)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = r.Text()
			continue
		}
		if r.Text() != first {
			t.Fatalf("the text changed between inspections:\n%s\n---\n%s", first, r.Text())
		}
	}
}
