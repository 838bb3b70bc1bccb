package dit

import (
	"h3studio/engine/compute"
	"h3studio/engine/compute/meta"
	"h3studio/engine/safetensors"
)

// CheckCheckpoint checks, from the safetensors headers alone (no
// weight is mapped), that the transformer's config describes its
// checkpoint: every tensor of the config's inventory present with its
// shape, nothing else. Plan runs the model shape-only from the config, so a
// corrupt config.json (num_layers 100000000, latents_dim 1e8) must be
// refused here, naming the rule, rather than planned until memory runs out.
func CheckCheckpoint(dir string, cfg Config) error {
	return CheckCheckpointQuant(dir, cfg, compute.QuantFormat{})
}

// CheckCheckpointQuant is CheckCheckpoint for a model opened with
// Options.Quant q (an MLX-format quantized file is accepted only under the
// format it holds).
func CheckCheckpointQuant(dir string, cfg Config, q compute.QuantFormat) (err error) {
	defer compute.Recover(&err)
	ck, err := safetensors.ValidateDir(dir)
	if err != nil {
		return err
	}
	defer ck.Close()
	mb := meta.New()
	m, err := Load(mb, safetensors.NewBinder("dit", headersOnly{ck}, mb.Weights()), &cfg, &Options{Quant: q})
	if err != nil {
		return err
	}
	m.Close()
	return nil
}

// headersOnly is a checkpoint read for its headers: tensors have names,
// dtypes and shapes but no contents (a Binder over the meta backend then
// checks a model's inventory without reading any weight).
type headersOnly struct{ ck *safetensors.Checkpoint }

func (h headersOnly) Info(name string) (safetensors.TensorInfo, bool) { return h.ck.Info(name) }
func (h headersOnly) Data(string) ([]byte, error)                     { return nil, nil }
func (h headersOnly) Names() []string                                 { return h.ck.Names() }
