// Package snapshot discovers MiniMax-H3 checkpoint folders on disk, reads
// the snapshot-level configuration files (model_index.json, scheduler,
// tokenizer and processor files), and tells which components and tasks they
// provide. Each component's config.json is read by the component's package
// (dit, qwen3vl, videovae, audiovae); Inspect assembles the report from those
// readers.
//
// Two layouts are recognised (spec H3-DIT.md §1, H3-ENCODERS-VAES.md §2):
//
//   - the original release: partitions FL2VA/ (tasks t2va, fl2va) and Ref2VA/
//     (task ref2va), each with model_index.json, transformer/,
//     text_encoder/, tokenizer/, processor/, video_vae/ (wrapper config; the
//     weights in the folder its source_path names, source/) and audio_vae/;
//   - the diffusers root layout: model_index.json (or
//     modular_model_index.json), transformer/ (FL2VA weights),
//     transformer_ref/ (Ref2VA weights), text_encoder/, tokenizer/,
//     processor/, vae/, audio_vae/, scheduler/, audio_scheduler/.
//
// Both may sit side by side. A folder holding only some components (say just
// text_encoder/) is accepted for the components it has; the released text
// encoder's copies of the tokenizer and processor files stand in for
// missing tokenizer/ and processor/ folders. Discovery reads directory
// entries only; Inspect reads configs and safetensors headers, never weights.
package snapshot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"h3studio/engine/configfile"
)

// Kind is a model component.
type Kind string

// Component kinds.
const (
	Transformer Kind = "transformer"
	TextEncoder Kind = "text_encoder"
	Tokenizer   Kind = "tokenizer"
	Processor   Kind = "processor"
	VideoVAE    Kind = "video_vae"
	AudioVAE    Kind = "audio_vae"
)

// Kinds lists every component kind in pipeline order.
var Kinds = []Kind{Tokenizer, Processor, TextEncoder, Transformer, VideoVAE, AudioVAE}

// Title is the kind's name for people ("video VAE").
func (k Kind) Title() string {
	switch k {
	case Transformer:
		return "transformer"
	case TextEncoder:
		return "text encoder"
	case Tokenizer:
		return "tokenizer"
	case Processor:
		return "processor"
	case VideoVAE:
		return "video VAE"
	case AudioVAE:
		return "audio VAE"
	}
	return string(k)
}

// Partition is a released checkpoint partition.
type Partition string

// Partitions.
const (
	FL2VA  Partition = "FL2VA"
	Ref2VA Partition = "Ref2VA"
)

// Partitions lists both partitions.
var Partitions = []Partition{FL2VA, Ref2VA}

// Layout is an on-disk layout (configfile's, which the component readers
// share).
type Layout = configfile.Layout

// Layouts.
const (
	Original  = configfile.Original  // FL2VA/ and Ref2VA/ partitions
	Diffusers = configfile.Diffusers // diffusers root layout
	Loose     = configfile.Loose     // component folders at the root without a model_index.json
)

// Task is a generation task.
type Task string

// Tasks and the partition each needs.
const (
	T2VA    Task = "t2va"
	FL2VAT  Task = "fl2va"
	Ref2VAT Task = "ref2va"
)

// Tasks lists every task.
var Tasks = []Task{T2VA, FL2VAT, Ref2VAT}

// PartitionOf returns the partition a task runs on.
func PartitionOf(t Task) Partition {
	if t == Ref2VAT {
		return Ref2VA
	}
	return FL2VA
}

// Requires lists the components a task needs: the partition's transformer,
// the text side (tokenizer, text encoder; the processor when images are
// presented to it) and both VAEs.
func Requires(t Task) []Kind {
	if t == T2VA {
		return []Kind{Tokenizer, TextEncoder, Transformer, VideoVAE, AudioVAE}
	}
	return []Kind{Tokenizer, Processor, TextEncoder, Transformer, VideoVAE, AudioVAE}
}

// Component is one component folder.
type Component struct {
	Kind      Kind
	Partition Partition // the partition it belongs to ("" for a shared root folder)
	Layout    Layout
	// Dir holds the weights (video_vae/source for the original video VAE),
	// or the tokenizer/processor files.
	Dir string
	// ConfigDir holds the component's config.json (video_vae/ for the
	// original video VAE's wrapper config; equal to Dir otherwise).
	ConfigDir string
	// Borrowed is true for a tokenizer or processor found inside
	// text_encoder/ (the released text encoder carries copies).
	Borrowed bool
}

// Where names the component for people: "FL2VA/transformer".
func (c *Component) Where(root string) string {
	rel, err := filepath.Rel(root, c.ConfigDir)
	if err != nil {
		return c.ConfigDir
	}
	return filepath.ToSlash(rel)
}

// PartitionDir is a partition folder of the original layout.
type PartitionDir struct {
	Name Partition
	Dir  string
	// ModelIndex is the path of its model_index.json ("" when absent).
	ModelIndex string
}

// Snapshot is a discovered checkpoint root.
type Snapshot struct {
	Root       string
	Layout     Layout // the primary layout: Original when partition folders exist
	Partitions []PartitionDir
	// RootIndex is the diffusers root's model_index.json or
	// modular_model_index.json ("" when absent).
	RootIndex string
	// Schedulers maps "scheduler" and "audio_scheduler" to their config
	// paths (diffusers root layout only).
	Schedulers map[string]string
	Components []*Component
}

// ErrNotSnapshot means the folder holds no recognisable component.
var ErrNotSnapshot = errors.New("snapshot: not a MiniMax-H3 snapshot")

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// Open discovers the components under root.
func Open(root string) (*Snapshot, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%w: %s is a file, not a folder", ErrNotSnapshot, root)
	}
	// Components are found by name; an unreadable folder that then seems
	// empty is reported as unreadable, not as "not a snapshot".
	_, readErr := os.ReadDir(root)
	s := &Snapshot{Root: root, Schedulers: map[string]string{}}
	add := func(k Kind, p Partition, l Layout, dir, cfg string) bool {
		if !isDir(cfg) {
			return false
		}
		s.Components = append(s.Components, &Component{Kind: k, Partition: p, Layout: l, Dir: dir, ConfigDir: cfg})
		return true
	}
	// borrow adds a tokenizer or processor found inside a text encoder
	// folder when its own folder is absent.
	borrow := func(k Kind, p Partition, l Layout, te string, file string) {
		if fileExists(filepath.Join(te, file)) {
			s.Components = append(s.Components, &Component{Kind: k, Partition: p, Layout: l, Dir: te, ConfigDir: te, Borrowed: true})
		}
	}
	for _, p := range Partitions {
		pd := filepath.Join(root, string(p))
		if !isDir(pd) {
			continue
		}
		part := PartitionDir{Name: p, Dir: pd}
		if mi := filepath.Join(pd, "model_index.json"); fileExists(mi) {
			part.ModelIndex = mi
		}
		s.Partitions = append(s.Partitions, part)
		s.Layout = Original
		for _, k := range []Kind{Transformer, TextEncoder, AudioVAE} {
			add(k, p, Original, filepath.Join(pd, string(k)), filepath.Join(pd, string(k)))
		}
		te := filepath.Join(pd, string(TextEncoder))
		if !add(Tokenizer, p, Original, filepath.Join(pd, "tokenizer"), filepath.Join(pd, "tokenizer")) {
			borrow(Tokenizer, p, Original, te, "tokenizer.json")
		}
		if !add(Processor, p, Original, filepath.Join(pd, "processor"), filepath.Join(pd, "processor")) {
			borrow(Processor, p, Original, te, "preprocessor_config.json")
		}
		vv := filepath.Join(pd, "video_vae")
		add(VideoVAE, p, Original, filepath.Join(vv, videoSourceDir(vv)), vv)
	}

	// The diffusers root layout (may sit beside the partitions).
	diff := Loose
	for _, name := range []string{"model_index.json", "modular_model_index.json"} {
		if p := filepath.Join(root, name); fileExists(p) {
			s.RootIndex, diff = p, Diffusers
			break
		}
	}
	add(Transformer, FL2VA, diff, filepath.Join(root, "transformer"), filepath.Join(root, "transformer"))
	add(Transformer, Ref2VA, diff, filepath.Join(root, "transformer_ref"), filepath.Join(root, "transformer_ref"))
	te := filepath.Join(root, string(TextEncoder))
	add(TextEncoder, "", diff, te, te)
	if !add(Tokenizer, "", diff, filepath.Join(root, "tokenizer"), filepath.Join(root, "tokenizer")) {
		borrow(Tokenizer, "", diff, te, "tokenizer.json")
	}
	if !add(Processor, "", diff, filepath.Join(root, "processor"), filepath.Join(root, "processor")) {
		borrow(Processor, "", diff, te, "preprocessor_config.json")
	}
	add(AudioVAE, "", diff, filepath.Join(root, "audio_vae"), filepath.Join(root, "audio_vae"))
	add(VideoVAE, "", diff, filepath.Join(root, "vae"), filepath.Join(root, "vae"))
	if vv := filepath.Join(root, "video_vae"); isDir(vv) { // a loose original-layout video VAE
		add(VideoVAE, "", Original, filepath.Join(vv, videoSourceDir(vv)), vv)
	}
	for _, name := range []string{"scheduler", "audio_scheduler"} {
		if p := filepath.Join(root, name, "scheduler_config.json"); fileExists(p) {
			s.Schedulers[name] = p
		}
	}

	if len(s.Components) == 0 && s.RootIndex == "" && !s.hasPartitionIndex() {
		if readErr != nil {
			return nil, fmt.Errorf("snapshot: cannot read the folder: %w", readErr)
		}
		return nil, fmt.Errorf("%w: %s has none of FL2VA/, Ref2VA/, model_index.json, transformer/, text_encoder/, vae/, audio_vae/", ErrNotSnapshot, root)
	}
	if s.Layout == 0 {
		s.Layout = diff
	}
	sort.SliceStable(s.Components, func(i, j int) bool { return s.Components[i].Partition < s.Components[j].Partition })
	return s, nil
}

func (s *Snapshot) hasPartitionIndex() bool {
	for _, p := range s.Partitions {
		if p.ModelIndex != "" {
			return true
		}
	}
	return false
}

// videoSourceDir is the folder the original video VAE's wrapper config
// names (source_path, "source" by default); Inspect validates the config.
func videoSourceDir(vv string) string {
	o, err := configfile.Read(filepath.Join(vv, "config.json"))
	if err != nil {
		return "source"
	}
	if s := o.OptStr("source_path", "source"); o.Err() == nil && configfile.PlainName(s) {
		return s
	}
	return "source"
}

// Find returns the component of kind k to use for partition p: the
// partition's own folder when present, else a shared root folder, else (for
// components identical in both partitions: everything but the transformer)
// the other partition's folder. Folders of its own kind are preferred to
// copies borrowed from a text encoder. It returns nil when there is none.
func (s *Snapshot) Find(p Partition, k Kind) *Component {
	best, bestRank := (*Component)(nil), 99
	for _, c := range s.Components {
		if c.Kind != k {
			continue
		}
		var rank int
		switch {
		case c.Partition == p && c.Layout == Original:
			rank = 0
		case c.Partition == p:
			rank = 2
		case c.Partition == "":
			rank = 2
		case k != Transformer:
			rank = 4
		default:
			continue
		}
		if c.Borrowed {
			rank++
		}
		if rank < bestRank {
			best, bestRank = c, rank
		}
	}
	return best
}

// PartitionsPresent lists the partitions the snapshot provides a transformer
// or a partition folder for.
func (s *Snapshot) PartitionsPresent() []Partition {
	var out []Partition
	for _, p := range Partitions {
		has := false
		for _, d := range s.Partitions {
			has = has || d.Name == p
		}
		for _, c := range s.Components {
			has = has || c.Kind == Transformer && c.Partition == p
		}
		if has {
			out = append(out, p)
		}
	}
	return out
}
