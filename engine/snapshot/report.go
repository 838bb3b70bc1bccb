package snapshot

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"h3studio/engine/audiovae"
	"h3studio/engine/compute"
	"h3studio/engine/configfile"
	"h3studio/engine/dit"
	"h3studio/engine/qwen3vl"
	"h3studio/engine/safetensors"
	"h3studio/engine/videovae"
)

// DTypeStat summarises a component's tensors of one dtype.
type DTypeStat struct {
	DType   string `json:"dtype"`
	Tensors int    `json:"tensors"`
	Params  int64  `json:"params"`
	Bytes   int64  `json:"bytes"`
}

// ComponentReport is what Inspect found in one component folder.
type ComponentReport struct {
	Kind      Kind        `json:"kind"`
	Partition Partition   `json:"partition,omitempty"`
	Layout    string      `json:"layout"`
	Where     string      `json:"where"` // the folder, relative to the root
	Borrowed  bool        `json:"borrowed,omitempty"`
	Shards    int         `json:"shards,omitempty"` // safetensors files
	Tensors   int         `json:"tensors,omitempty"`
	Params    int64       `json:"params,omitempty"`
	Bytes     int64       `json:"bytes,omitempty"`
	DTypes    []DTypeStat `json:"dtypes,omitempty"`
	Summary   string      `json:"summary,omitempty"`
	// Error is the first corruption found (naming the file and the rule);
	// "" when the component is sound.
	Error    string   `json:"error,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Config is the typed configuration (dit.Config, *qwen3vl.Config, …) when it
	// parsed.
	Config any `json:"-"`

	comp *Component
}

// OK reports whether the component is sound.
func (c *ComponentReport) OK() bool { return c.Error == "" }

// TaskReport says whether a task can run.
type TaskReport struct {
	Task      Task      `json:"task"`
	Partition Partition `json:"partition"`
	Available bool      `json:"available"`
	// Missing and Broken list the components that are absent or corrupt.
	Missing []Kind `json:"missing,omitempty"`
	Broken  []Kind `json:"broken,omitempty"`
	// Undeclared is true when the partition's model_index.json does not
	// list the task.
	Undeclared bool `json:"undeclared,omitempty"`
	// Uses maps each required component to the folder it would come from.
	Uses map[Kind]string `json:"uses,omitempty"`
}

// Why explains an unavailable task in a few words.
func (t *TaskReport) Why() string {
	var parts []string
	if len(t.Missing) > 0 {
		parts = append(parts, "missing "+kindList(t.Missing))
	}
	if len(t.Broken) > 0 {
		parts = append(parts, "corrupt "+kindList(t.Broken))
	}
	if t.Undeclared {
		parts = append(parts, fmt.Sprintf("not declared by %s/model_index.json", t.Partition))
	}
	return strings.Join(parts, "; ")
}

func kindList(ks []Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = k.Title()
	}
	return strings.Join(s, ", ")
}

// MissingReport is an absent component and the tasks its absence disables.
type MissingReport struct {
	Kind       Kind        `json:"kind"`
	Partitions []Partition `json:"partitions"`
	Disables   []Task      `json:"disables"`
}

// Problem is a corrupt file: its path and the rule it breaks.
type Problem struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// PartitionReport describes a partition folder or the diffusers root index.
type PartitionReport struct {
	Name       string   `json:"name"` // "FL2VA", "Ref2VA" or "diffusers root"
	ModelIndex string   `json:"model_index,omitempty"`
	Class      string   `json:"class,omitempty"`
	Tasks      []string `json:"tasks,omitempty"`
	VideoShift float64  `json:"video_shift,omitempty"`
	AudioShift float64  `json:"audio_shift,omitempty"`
}

// Report is the result of Inspect.
type Report struct {
	Root       string             `json:"root"`
	Layouts    []string           `json:"layouts"`
	Demo       bool               `json:"demo,omitempty"`
	DemoNote   string             `json:"demo_note,omitempty"`
	DemoName   string             `json:"demo_name,omitempty"`
	Partitions []PartitionReport  `json:"partitions,omitempty"`
	Components []*ComponentReport `json:"components"`
	Schedulers map[string]float64 `json:"schedulers,omitempty"` // shift per scheduler config
	Tasks      []TaskReport       `json:"tasks"`
	Missing    []MissingReport    `json:"missing,omitempty"`
	Problems   []Problem          `json:"problems,omitempty"`
	Warnings   []string           `json:"warnings,omitempty"`
	// Snapshot is the discovered layout.
	Snapshot *Snapshot `json:"-"`
}

// OK reports whether nothing present is corrupt.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// Totals sums the parameters and bytes of every component.
func (r *Report) Totals() (params, bytes int64) {
	for _, c := range r.Components {
		params += c.Params
		bytes += c.Bytes
	}
	return
}

// Inspect discovers the snapshot at root and checks everything present:
// every model_index.json and component config parses and validates, every
// safetensors header (and index) is sound, and every file an index or config
// names exists. It reads configs and headers only. It returns an error
// only when root is not a snapshot; corrupt files are listed in
// Report.Problems, each naming the file and the rule.
func Inspect(root string) (*Report, error) {
	s, err := Open(root)
	if err != nil {
		return nil, err
	}
	r := &Report{Root: root, Snapshot: s, Schedulers: map[string]float64{}}
	problem := func(path string, err error) {
		r.Problems = append(r.Problems, Problem{Path: path, Error: err.Error()})
	}
	if len(s.Partitions) > 0 {
		r.Layouts = append(r.Layouts, Original.String())
	}
	if s.RootIndex != "" {
		r.Layouts = append(r.Layouts, Diffusers.String())
	} else if len(s.Partitions) == 0 || hasLayout(s, Loose) {
		r.Layouts = append(r.Layouts, Loose.String())
	}

	declared := map[Partition][]string{}
	for _, p := range s.Partitions {
		pr := PartitionReport{Name: string(p.Name)}
		if p.ModelIndex == "" {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s/ has no model_index.json", p.Name))
			r.Partitions = append(r.Partitions, pr)
			continue
		}
		pr.ModelIndex = rel(root, p.ModelIndex)
		mi, err := ReadModelIndex(p.ModelIndex)
		if err != nil {
			problem(p.ModelIndex, err)
			r.Partitions = append(r.Partitions, pr)
			continue
		}
		if mi.HasH3 && !strings.EqualFold(mi.Partition, string(p.Name)) {
			problem(p.ModelIndex, &ConfigError{Path: p.ModelIndex, Field: "_minimax_h3.partition", Rule: fmt.Sprintf("is %q but the file sits in the %s partition", mi.Partition, p.Name)})
		}
		if mi.HasH3 {
			declared[p.Name] = mi.Tasks
		}
		pr.Class, pr.Tasks, pr.VideoShift, pr.AudioShift = mi.ClassName, mi.Tasks, mi.VideoShift, mi.AudioShift
		r.Partitions = append(r.Partitions, pr)
		r.Demo, r.DemoNote = r.Demo || mi.Demo, cmp.Or(r.DemoNote, mi.DemoNote)
		r.DemoName = cmp.Or(r.DemoName, mi.DemoName)
	}
	if s.RootIndex != "" {
		pr := PartitionReport{Name: "diffusers root", ModelIndex: rel(root, s.RootIndex)}
		if mi, err := ReadModelIndex(s.RootIndex); err != nil {
			problem(s.RootIndex, err)
		} else {
			pr.Class = mi.ClassName
			r.Demo, r.DemoNote = r.Demo || mi.Demo, cmp.Or(r.DemoNote, mi.DemoNote)
			r.DemoName = cmp.Or(r.DemoName, mi.DemoName)
		}
		r.Partitions = append(r.Partitions, pr)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Schedulers)) {
		c, err := ReadSchedulerConfig(s.Schedulers[name])
		if err != nil {
			problem(s.Schedulers[name], err)
			continue
		}
		r.Schedulers[name] = c.Shift
	}

	reports := make([]*ComponentReport, len(s.Components))
	safetensors.Parallel(len(s.Components), func(i int) { reports[i] = inspectComponent(root, s.Components[i]) })
	for _, cr := range reports {
		if cr.Error != "" {
			r.Problems = append(r.Problems, Problem{Path: cr.Where, Error: cr.Error})
		}
		r.Warnings = append(r.Warnings, cr.Warnings...)
		r.Components = append(r.Components, cr)
	}

	sort.SliceStable(r.Components, func(i, j int) bool {
		a, b := r.Components[i], r.Components[j]
		if ga, gb := groupOf(a.comp), groupOf(b.comp); ga != gb {
			return ga < gb
		}
		if ka, kb := kindIndex(a.Kind), kindIndex(b.Kind); ka != kb {
			return ka < kb
		}
		return a.Where < b.Where
	})

	// Tasks and missing components.
	byComp := map[*Component]*ComponentReport{}
	for _, cr := range r.Components {
		byComp[cr.comp] = cr
	}
	missing := map[Kind]*MissingReport{}
	for _, t := range Tasks {
		p := PartitionOf(t)
		tr := TaskReport{Task: t, Partition: p, Uses: map[Kind]string{}}
		if tasks, ok := declared[p]; ok && !slices.Contains(tasks, string(t)) {
			tr.Undeclared = true
		}
		for _, k := range Requires(t) {
			c := s.Find(p, k)
			switch {
			case c == nil:
				tr.Missing = append(tr.Missing, k)
				m := missing[k]
				if m == nil {
					m = &MissingReport{Kind: k}
					missing[k] = m
				}
				if !slices.Contains(m.Partitions, p) {
					m.Partitions = append(m.Partitions, p)
				}
				m.Disables = append(m.Disables, t)
			case !byComp[c].OK():
				tr.Broken = append(tr.Broken, k)
				tr.Uses[k] = byComp[c].Where
			default:
				tr.Uses[k] = byComp[c].Where
			}
		}
		tr.Available = len(tr.Missing) == 0 && len(tr.Broken) == 0 && !tr.Undeclared
		r.Tasks = append(r.Tasks, tr)
	}
	for _, k := range Kinds {
		if m := missing[k]; m != nil {
			r.Missing = append(r.Missing, *m)
		}
	}
	return r, nil
}

// groupOf orders components: the FL2VA partition's, the Ref2VA
// partition's, then the root folders.
func groupOf(c *Component) int {
	if c.Layout == Original && c.Partition != "" {
		if c.Partition == FL2VA {
			return 0
		}
		return 1
	}
	return 2
}

func kindIndex(k Kind) int {
	for i, x := range Kinds {
		if x == k {
			return i
		}
	}
	return len(Kinds)
}

func hasLayout(s *Snapshot, l Layout) bool {
	for _, c := range s.Components {
		if c.Layout == l {
			return true
		}
	}
	return false
}

func rel(root, p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil || strings.HasPrefix(r, "..") {
		return p
	}
	return filepath.ToSlash(r)
}

// configOf is a component reader's result as a report's Config: nil (not a
// typed nil) when reading failed.
func configOf[C any](cfg C, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// inspectComponent validates one component's config and weight headers.
func inspectComponent(root string, c *Component) *ComponentReport {
	cr := &ComponentReport{Kind: c.Kind, Partition: c.Partition, Layout: c.Layout.String(), Where: c.Where(root), Borrowed: c.Borrowed, comp: c}
	fail := func(err error) *ComponentReport {
		cr.Error = relErr(root, err)
		return cr
	}
	var weightsDir, weightsFile, namedBy string
	var readErr error
	switch c.Kind {
	case Transformer:
		cr.Config, readErr = configOf(dit.ReadConfig(c.ConfigDir))
		weightsDir = c.Dir
	case TextEncoder:
		cr.Config, readErr = configOf(qwen3vl.ReadConfig(c.ConfigDir))
		weightsDir = c.Dir
	case Tokenizer:
		cr.Config, readErr = configOf(ReadTokenizerFiles(c.Dir))
	case Processor:
		// A processor folder must hold preprocessor_config.json (the
		// reader falls back to the released values for a text encoder
		// folder without one).
		if p := filepath.Join(c.Dir, "preprocessor_config.json"); !fileExists(p) {
			_, readErr = configfile.Read(p) // missing, a folder or unreadable: it says which
		} else {
			cr.Config, readErr = configOf(qwen3vl.ReadProcessorConfig(c.Dir, nil))
		}
	case VideoVAE:
		cfg, err := videovae.ReadConfig(c.ConfigDir, c.Dir)
		if err != nil {
			return fail(err)
		}
		cr.Config = cfg
		weightsDir, weightsFile, namedBy = c.Dir, cfg.WeightsFile, "source_path/source_safetensors_path"
	case AudioVAE:
		cfg, err := audiovae.ReadConfig(c.ConfigDir)
		if err != nil {
			return fail(err)
		}
		cr.Config = cfg
		weightsDir, weightsFile, namedBy = c.Dir, cfg.WeightsFile, "source_safetensors_path"
	}
	if readErr != nil {
		return fail(readErr)
	}
	cr.Summary = configSummary(cr.Config)
	if weightsDir == "" {
		return cr
	}
	if weightsFile != "" {
		p := filepath.Join(weightsDir, weightsFile)
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			return fail(&safetensors.FormatError{Path: p, Rule: fmt.Sprintf("named by %s (%s) but missing", rel(root, filepath.Join(c.ConfigDir, "config.json")), namedBy)})
		}
	}
	ck, err := safetensors.ValidateDir(weightsDir)
	if err != nil {
		if errors.Is(err, safetensors.ErrNoWeights) {
			return fail(fmt.Errorf("snapshot: %s: no .safetensors weights", rel(root, weightsDir)))
		}
		return fail(err)
	}
	cr.Shards = len(ck.Files)
	if tc, ok := cr.Config.(dit.Config); ok {
		if err := tc.CheckWeights(filepath.Join(c.ConfigDir, "config.json"), ck); err != nil {
			return fail(err)
		}
	}
	for _, w := range ck.Warnings {
		cr.Warnings = append(cr.Warnings, rel(root, weightsDir)+": "+w)
	}
	stats := map[compute.DType]*DTypeStat{}
	for _, f := range ck.Files {
		for _, t := range f.Header.Tensors {
			st := stats[t.DType]
			if st == nil {
				st = &DTypeStat{DType: t.DType.String()}
				stats[t.DType] = st
			}
			n := int64(t.Shape.NumElements())
			st.Tensors++
			st.Params += n
			st.Bytes += t.Bytes()
			cr.Tensors++
			cr.Params += n
			cr.Bytes += t.Bytes()
		}
	}
	for _, st := range stats {
		cr.DTypes = append(cr.DTypes, *st)
	}
	sort.Slice(cr.DTypes, func(i, j int) bool { return cr.DTypes[i].Bytes > cr.DTypes[j].Bytes })
	return cr
}

// relErr renders an error with absolute paths under root shortened.
func relErr(root string, err error) string {
	s := err.Error()
	if root != "" {
		s = strings.ReplaceAll(s, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator), "")
	}
	return s
}

// humanBytes renders a byte count with a binary-free decimal unit (as disk
// sizes are quoted): 66.3 GB.
func humanBytes(n int64) string {
	return humanScaled(n, []unitScale{{1e12, "%.2f TB"}, {1e9, "%.1f GB"}, {1e6, "%.1f MB"}, {1e3, "%.1f kB"}}, "%d B")
}

// HumanBytes is humanBytes for callers.
func HumanBytes(n int64) string { return humanBytes(n) }

// HumanCount renders a parameter count: 33.1 B, 151.3 M, 1.5 k.
func HumanCount(n int64) string {
	return humanScaled(n, []unitScale{{1e9, "%.1f B"}, {1e6, "%.1f M"}, {1e3, "%.1f k"}}, "%d")
}

// unitScale is one decimal unit: counts of at least size are printed
// divided by it with format.
type unitScale struct {
	size   float64
	format string
}

// humanScaled prints n in the first of scales (largest first) it reaches,
// or with small when it reaches none.
func humanScaled(n int64, scales []unitScale, small string) string {
	for _, u := range scales {
		if float64(n) >= u.size {
			return fmt.Sprintf(u.format, float64(n)/u.size)
		}
	}
	return fmt.Sprintf(small, n)
}
