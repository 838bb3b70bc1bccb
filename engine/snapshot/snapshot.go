// Package snapshot discovers MiniMax-H3 checkpoint folders on disk and tells
// which components and tasks they provide.
//
// Two layouts are recognised (spec H3-DIT.md §1, H3-ENCODERS-VAES.md §2):
//
//   - the original release: partitions FL2VA/ (tasks t2va, fl2va) and Ref2VA/
//     (task ref2va), each with transformer/, text_encoder/, tokenizer/,
//     processor/, video_vae/ (wrapper config; weights in video_vae/source/) and
//     audio_vae/;
//   - the diffusers root layout: transformer/ (FL2VA weights), transformer_ref/
//     (Ref2VA weights), text_encoder/, tokenizer/, processor/, vae/,
//     audio_vae/, scheduler/, audio_scheduler/.
//
// A folder holding only some components (say just text_encoder/) is accepted
// for the components it has. Discovery reads directory entries, configs and
// safetensors headers only; no weight is mapped.
package snapshot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
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

// Partition is a released checkpoint partition.
type Partition string

// Partitions.
const (
	FL2VA  Partition = "FL2VA"
	Ref2VA Partition = "Ref2VA"
)

// Layout is an on-disk layout.
type Layout uint8

// Layouts.
const (
	Original  Layout = iota + 1 // FL2VA/ and Ref2VA/ partitions
	Diffusers                   // diffusers root layout
	Loose                       // component folders at the root without a layout marker
)

func (l Layout) String() string {
	switch l {
	case Original:
		return "original release layout"
	case Diffusers:
		return "diffusers layout"
	case Loose:
		return "component folders"
	}
	return "unknown layout"
}

// Task is a generation task.
type Task string

// Tasks and the partition each needs.
const (
	T2VA    Task = "t2va"
	FL2VAT  Task = "fl2va"
	Ref2VAT Task = "ref2va"
)

// PartitionOf returns the partition a task runs on.
func PartitionOf(t Task) Partition {
	if t == Ref2VAT {
		return Ref2VA
	}
	return FL2VA
}

// Component is one component folder.
type Component struct {
	Kind      Kind
	Partition Partition // the partition it belongs to ("" for a shared root folder)
	Layout    Layout
	// Dir holds the weights (video_vae/source for the original video VAE).
	Dir string
	// ConfigDir holds the component's config.json (video_vae/ for the
	// original video VAE's wrapper config; equal to Dir otherwise).
	ConfigDir string
}

// Snapshot is a discovered checkpoint root.
type Snapshot struct {
	Root       string
	Layout     Layout
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
	if !isDir(root) {
		return nil, fmt.Errorf("snapshot: %s: not a folder", root)
	}
	s := &Snapshot{Root: root}
	add := func(k Kind, p Partition, l Layout, dir, cfg string) {
		if isDir(dir) {
			s.Components = append(s.Components, &Component{Kind: k, Partition: p, Layout: l, Dir: dir, ConfigDir: cfg})
		}
	}
	for _, p := range []Partition{FL2VA, Ref2VA} {
		pd := filepath.Join(root, string(p))
		if !isDir(pd) {
			continue
		}
		s.Layout = Original
		for _, k := range []Kind{Transformer, TextEncoder, Tokenizer, Processor, AudioVAE} {
			add(k, p, Original, filepath.Join(pd, string(k)), filepath.Join(pd, string(k)))
		}
		add(VideoVAE, p, Original, filepath.Join(pd, "video_vae", "source"), filepath.Join(pd, "video_vae"))
	}
	// Diffusers root layout (may sit beside the partitions).
	diff := Diffusers
	if !isFile(filepath.Join(root, "modular_model_index.json")) && !isFile(filepath.Join(root, "model_index.json")) {
		diff = Loose
	}
	add(Transformer, FL2VA, diff, filepath.Join(root, "transformer"), filepath.Join(root, "transformer"))
	add(Transformer, Ref2VA, diff, filepath.Join(root, "transformer_ref"), filepath.Join(root, "transformer_ref"))
	for _, k := range []Kind{TextEncoder, Tokenizer, Processor, AudioVAE} {
		add(k, "", diff, filepath.Join(root, string(k)), filepath.Join(root, string(k)))
	}
	add(VideoVAE, "", diff, filepath.Join(root, "vae"), filepath.Join(root, "vae"))
	if len(s.Components) == 0 {
		return nil, fmt.Errorf("%w: %s has none of FL2VA/, Ref2VA/, transformer/, text_encoder/, vae/, audio_vae/", ErrNotSnapshot, root)
	}
	if s.Layout == 0 {
		s.Layout = diff
	}
	sort.SliceStable(s.Components, func(i, j int) bool { return s.Components[i].Partition < s.Components[j].Partition })
	return s, nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// Find returns the component of kind k to use for partition p: the
// partition's own folder when present, else a shared root folder, else (for
// components identical in both partitions: everything but the transformer)
// the other partition's folder. It returns nil when there is none.
func (s *Snapshot) Find(p Partition, k Kind) *Component {
	var shared, other *Component
	for _, c := range s.Components {
		if c.Kind != k {
			continue
		}
		switch {
		case c.Partition == p && c.Layout == Original:
			return c
		case c.Partition == p:
			if shared == nil {
				shared = c
			}
		case c.Partition == "":
			if shared == nil {
				shared = c
			}
		default:
			if other == nil {
				other = c
			}
		}
	}
	if shared != nil {
		return shared
	}
	if k != Transformer {
		return other
	}
	return nil
}
