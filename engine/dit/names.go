package dit

import "fmt"

// WeightLayout is the tensor naming of a transformer checkpoint folder
// (H3-DIT §1.6).
type WeightLayout uint8

// Checkpoint layouts.
const (
	// OriginalLayout is the released FL2VA/ and Ref2VA/ transformer: a
	// per-head interleaved attn.qkv_proj and mlp.fc1 = [gate; value].
	OriginalLayout WeightLayout = iota + 1
	// DiffusersLayout is transformer/ and transformer_ref/ of the diffusers
	// root layout: attn.to_q/to_k/to_v and ff.net.0.proj = [value; gate].
	DiffusersLayout
)

func (l WeightLayout) String() string {
	switch l {
	case OriginalLayout:
		return "original layout"
	case DiffusersLayout:
		return "diffusers layout"
	}
	return "unknown layout"
}

// names spells the checkpoint tensor names of one layout.
type names struct{ l WeightLayout }

func (n names) orig() bool { return n.l == OriginalLayout }

func (n names) pick(orig, diff string) string {
	if n.orig() {
		return orig
	}
	return diff
}

func (n names) contextEmbedder() string { return n.pick("condition_proj", "context_embedder") }
func (n names) videoIn() string         { return n.pick("video_patch_proj", "proj_in") }
func (n names) audioIn() string         { return n.pick("audio_patch_proj", "audio_proj_in") }
func (n names) timeIn() string          { return n.pick("time_embedder.proj_in", "time_embedder.linear_1") }
func (n names) timeOut() string         { return n.pick("time_embedder.proj_out", "time_embedder.linear_2") }
func (n names) refinerBlock(i int) string {
	return fmt.Sprintf(n.pick("token_refiner.blocks.%d.", "token_refiner.refiner_blocks.%d."), i)
}
func (n names) refinerNorm() string { return "token_refiner.final_norm" }
func (n names) block(i int) string {
	return fmt.Sprintf(n.pick("blocks.%d.", "transformer_blocks.%d."), i)
}
func (n names) finalNorm() string   { return n.pick("final_layer.norm", "norm_out.norm") }
func (n names) finalAdaLN() string  { return n.pick("final_layer.adaln_proj.linear", "norm_out.linear") }
func (n names) videoOut() string    { return n.pick("final_layer.video_out", "proj_out") }
func (n names) audioOut() string    { return n.pick("final_layer.audio_out", "audio_proj_out") }
func (n names) qNorm() string       { return n.pick("attn.q_norm", "attn.norm_q") }
func (n names) kNorm() string       { return n.pick("attn.k_norm", "attn.norm_k") }
func (n names) attnOut() string     { return n.pick("attn.out_proj", "attn.to_out.0") }
func (n names) fc1() string         { return n.pick("mlp.fc1", "ff.net.0.proj") }
func (n names) fc2() string         { return n.pick("mlp.fc2", "ff.net.2") }
func (n names) blockAdaLN() string  { return "adaln_proj.linear" }
func (n names) ropeInvFreq() string { return "rope.inv_freq" }
func (n names) gateFirst() bool     { return n.orig() } // [gate; value] vs [value; gate]
func (n names) qkvFused() string    { return "attn.qkv_proj" }
func (n names) qkvSplit() [3]string { return [3]string{"attn.to_q", "attn.to_k", "attn.to_v"} }

// spec is one expected checkpoint tensor.
type spec struct {
	name  string
	shape []int
}

// attnSpecs lists the attention tensors of a block or refiner block under prefix.
func (n names) attnSpecs(c Config, prefix string) []spec {
	var s []spec
	if n.orig() {
		s = append(s, spec{prefix + n.qkvFused() + ".weight", []int{3 * c.Inner(), c.HiddenSize}})
	} else {
		for _, q := range n.qkvSplit() {
			s = append(s, spec{prefix + q + ".weight", []int{c.Inner(), c.HiddenSize}})
		}
	}
	return append(s,
		spec{prefix + n.qNorm() + ".weight", []int{c.HeadDim}},
		spec{prefix + n.kNorm() + ".weight", []int{c.HeadDim}},
		spec{prefix + n.attnOut() + ".weight", []int{c.HiddenSize, c.Inner()}},
	)
}

func (n names) ffSpecs(c Config, prefix string) []spec {
	return []spec{
		{prefix + n.fc1() + ".weight", []int{2 * c.FFNDim, c.HiddenSize}},
		{prefix + n.fc2() + ".weight", []int{c.HiddenSize, c.FFNDim}},
	}
}

func linearSpecs(name string, out, in int, bias bool) []spec {
	s := []spec{{name + ".weight", []int{out, in}}}
	if bias {
		s = append(s, spec{name + ".bias", []int{out}})
	}
	return s
}

// inventory lists every tensor a checkpoint of this layout must hold.
func (n names) inventory(c Config) []spec {
	var s []spec
	H := c.HiddenSize
	s = append(s, linearSpecs(n.contextEmbedder(), H, c.TextDim, true)...)
	s = append(s, linearSpecs(n.videoIn(), H, c.PatchDim(), true)...)
	s = append(s, linearSpecs(n.audioIn(), H, c.AudioInChannels, true)...)
	s = append(s, linearSpecs(n.timeIn(), c.TimeHiddenDim, c.FreqDim, true)...)
	s = append(s, linearSpecs(n.timeOut(), c.TimeEmbedDim, c.TimeHiddenDim, true)...)
	for i := 0; i < c.RefinerLayers; i++ {
		p := n.refinerBlock(i)
		s = append(s, spec{p + "norm1.weight", []int{H}}, spec{p + "norm2.weight", []int{H}})
		s = append(s, n.attnSpecs(c, p)...)
		s = append(s, n.ffSpecs(c, p)...)
	}
	s = append(s, spec{n.refinerNorm() + ".weight", []int{H}})
	for i := 0; i < c.NumLayers; i++ {
		p := n.block(i)
		s = append(s, spec{p + "norm1.weight", []int{H}}, spec{p + "norm2.weight", []int{H}})
		s = append(s, n.attnSpecs(c, p)...)
		s = append(s, n.ffSpecs(c, p)...)
		s = append(s, linearSpecs(p+n.blockAdaLN(), c.AdaLNWidth(), c.TimeEmbedDim, true)...)
	}
	s = append(s, spec{n.finalNorm() + ".weight", []int{H}})
	s = append(s, linearSpecs(n.finalAdaLN(), 2*H, c.TimeEmbedDim, true)...)
	s = append(s, linearSpecs(n.videoOut(), c.PatchDim(), H, true)...)
	s = append(s, linearSpecs(n.audioOut(), c.AudioInChannels, H, true)...)
	if n.orig() {
		s = append(s, spec{n.ropeInvFreq(), []int{c.RopeFreqDim}})
	}
	return s
}
