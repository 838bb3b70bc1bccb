// Package partition reads what one partition's configs say — the
// tokenizer, the text encoder and image processor configs, the transformer
// and VAE configs — once and without weights, and checks that they belong
// together (vocabulary, text width, quantized checkpoint). The engine's
// Plan and Generate share the result.
package partition

import (
	"fmt"
	"path/filepath"

	"h3studio/engine/audiovae"
	"h3studio/engine/compute"
	"h3studio/engine/dit"
	"h3studio/engine/qwen3vl"
	"h3studio/engine/snapshot"
	"h3studio/engine/tokenizer"
	"h3studio/engine/videovae"
)

// Configs is what a partition's configs say.
type Configs struct {
	Partition snapshot.Partition

	Tokenizer       *tokenizer.Tokenizer
	TextDir         string
	Text            *qwen3vl.Config
	ProcessorConfig qwen3vl.ProcessorConfig
	Processor       *qwen3vl.Processor

	DiTDir string
	DiT    dit.Config

	VideoVAE *videovae.Config // nil when the partition has no video VAE
	AudioVAE *audiovae.Config // nil when it has no audio VAE
}

// ComponentError names the component (its folder under the snapshot root)
// an error happened in; what names it when c is nil.
func ComponentError(snap *snapshot.Snapshot, c *snapshot.Component, what string, err error) error {
	where := what
	if c != nil {
		where = c.Where(snap.Root)
	}
	return fmt.Errorf("engine: %s: %w", where, err)
}

// Read reads part's tokenizer and configs from snap (no weights) and checks
// that they belong together; quant is the transformer weight format the
// session asks for (its checkpoint must allow it).
func Read(snap *snapshot.Snapshot, part snapshot.Partition, quant compute.QuantFormat) (*Configs, error) {
	pi := &Configs{Partition: part}
	need := func(k snapshot.Kind) (*snapshot.Component, error) {
		c := snap.Find(part, k)
		if c == nil {
			return nil, fmt.Errorf("engine: the model folder has no %s %s (needed for %s)", part, k.Title(), map[snapshot.Partition]string{snapshot.FL2VA: "t2va and fl2va", snapshot.Ref2VA: "ref2va"}[part])
		}
		return c, nil
	}
	tc, err := need(snapshot.Tokenizer)
	if err != nil {
		return nil, err
	}
	if pi.Tokenizer, err = tokenizer.Load(tc.Dir); err != nil {
		return nil, ComponentError(snap, tc, "tokenizer", err)
	}
	te, err := need(snapshot.TextEncoder)
	if err != nil {
		return nil, err
	}
	pi.TextDir = te.Dir
	if pi.Text, err = qwen3vl.ReadConfig(te.Dir); err != nil {
		return nil, ComponentError(snap, te, "text encoder", err)
	}
	pcDir := te.Dir
	if pc := snap.Find(part, snapshot.Processor); pc != nil {
		pcDir = pc.Dir
	}
	if pi.ProcessorConfig, err = qwen3vl.ReadProcessorConfig(pcDir, pi.Text); err != nil {
		return nil, ComponentError(snap, te, "processor", err)
	}
	pi.Processor = qwen3vl.NewProcessor(pi.Text, pi.ProcessorConfig)
	if pi.Tokenizer.Len() > pi.Text.Text.VocabSize {
		return nil, fmt.Errorf("engine: %s: the tokenizer has %d ids but the text encoder's vocabulary only %d: they do not belong together",
			filepath.Dir(tc.Dir), pi.Tokenizer.Len(), pi.Text.Text.VocabSize)
	}
	tr, err := need(snapshot.Transformer)
	if err != nil {
		return nil, err
	}
	pi.DiTDir = tr.Dir
	if pi.DiT, err = dit.ReadConfig(tr.ConfigDir); err != nil {
		return nil, ComponentError(snap, tr, "transformer", err)
	}
	if err := dit.CheckCheckpointQuant(tr.Dir, pi.DiT, quant); err != nil {
		return nil, ComponentError(snap, tr, "transformer", err)
	}
	if pi.DiT.TextDim != pi.Text.Text.HiddenSize {
		return nil, fmt.Errorf("engine: the transformer reads %d-wide text conditioning but the text encoder is %d wide: they do not belong together", pi.DiT.TextDim, pi.Text.Text.HiddenSize)
	}
	if c := snap.Find(part, snapshot.VideoVAE); c != nil {
		if pi.VideoVAE, err = videovae.ReadConfig(c.ConfigDir, c.Dir); err != nil {
			return nil, ComponentError(snap, c, "video VAE", err)
		}
		if pi.VideoVAE.DecoderFFNHidden == 0 {
			pi.VideoVAE.DecoderFFNHidden = videovae.DecoderFFNHidden(c.Dir)
		}
	}
	if c := snap.Find(part, snapshot.AudioVAE); c != nil {
		if pi.AudioVAE, err = audiovae.ReadConfig(c.ConfigDir); err != nil {
			return nil, ComponentError(snap, c, "audio VAE", err)
		}
	}
	return pi, nil
}
