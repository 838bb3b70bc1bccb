package qwen3vl

import (
	"fmt"
	"math"

	"h3studio/engine/compute"
	"h3studio/engine/nn"
	"h3studio/engine/safetensors"
)

// VisionTower is the Qwen3-VL vision encoder: patch embedding, bilinearly
// interpolated learned position table, 2-D rotary attention blocks,
// deepstack mergers after the configured blocks and the final patch merger.
// Mirrors transformers' Qwen3VLVisionModel (modeling_qwen3_vl.py);
// H3-ENCODERS-VAES.md §7, ERRATA F9.
type VisionTower struct {
	cfg      *Config
	patch    nn.Linear // [hidden, 1536] view of the Conv3d weight, with bias
	posTable []float32 // [num_positions, hidden] host copy (interpolated on the host)
	blocks   []visionBlock
	deep     []patchMerger
	merger   patchMerger
}

type visionBlock struct {
	norm1, norm2 nn.LayerNorm
	qkv, proj    nn.Linear
	mlp          nn.MLP // mlp.linear_fc1, GELU (tanh), mlp.linear_fc2
}

type patchMerger struct {
	norm        nn.LayerNorm
	mlp         nn.MLP // linear_fc1, GELU, linear_fc2
	postShuffle bool   // LayerNorm over the merged width (deepstack) instead of per patch
}

// loadVision binds the vision tower from w (a binder at the checkpoint
// root). Errors are recorded in w.
func loadVision(w *safetensors.Binder, c *Config) *VisionTower {
	v := c.Vision
	dv, iv, dm, out := v.HiddenSize, v.IntermediateSize, c.MergedWidth(), v.OutHiddenSize
	vt := &VisionTower{cfg: c}
	vw := w.Sub(VisionPrefix)
	pw := vw.Tensor("patch_embed.proj.weight", dv, v.InChannels, v.TemporalPatchSize, v.PatchSize, v.PatchSize)
	if pw != nil {
		pw = pw.Reshape(dv, c.PatchInputs())
	}
	vt.patch = nn.Linear{W: pw, B: vw.Tensor("patch_embed.proj.bias", dv)}
	vt.posTable = vw.Float32s("pos_embed.weight", v.NumPositions, dv)
	for j := 0; j < v.Depth; j++ {
		bw := vw.Sub(fmt.Sprintf("blocks.%d.", j))
		vt.blocks = append(vt.blocks, visionBlock{
			norm1: nn.LoadLayerNorm(bw, "norm1", dv, 1e-6),
			norm2: nn.LoadLayerNorm(bw, "norm2", dv, 1e-6),
			qkv:   nn.LoadLinear(bw, "attn.qkv", compute.Invalid, 3*dv, dv, true),
			proj:  nn.LoadLinear(bw, "attn.proj", compute.Invalid, dv, dv, true),
			mlp: nn.MLP{
				Up:   nn.LoadLinear(bw, "mlp.linear_fc1", compute.Invalid, iv, dv, true),
				Down: nn.LoadLinear(bw, "mlp.linear_fc2", compute.Invalid, dv, iv, true),
				Act:  compute.GELUTanh,
			},
		})
	}
	loadMerger := func(mw *safetensors.Binder, normWidth int, post bool) patchMerger {
		return patchMerger{
			norm: nn.LoadLayerNorm(mw, "norm", normWidth, 1e-6),
			mlp: nn.MLP{
				Up:   nn.LoadLinear(mw, "linear_fc1", compute.Invalid, dm, dm, true),
				Down: nn.LoadLinear(mw, "linear_fc2", compute.Invalid, out, dm, true),
				Act:  compute.GELU,
			},
			postShuffle: post,
		}
	}
	for k := range v.DeepstackIndexes {
		vt.deep = append(vt.deep, loadMerger(vw.Sub(fmt.Sprintf("deepstack_merger_list.%d.", k)), dm, true))
	}
	vt.merger = loadMerger(vw.Sub("merger."), dv, false)
	return vt
}

// VisionOutput is the vision tower's result for one grid_t = 1 block:
// Merged [tokens, out_hidden] replaces the pad embeddings; Deepstack[k]
// [tokens, out_hidden] is added after decoder layer k. Tensors are in the
// activation dtype and owned by the caller.
type VisionOutput struct {
	Merged    *compute.Tensor
	Deepstack []*compute.Tensor
}

// Free releases the output's tensors.
func (o *VisionOutput) Free(b compute.Backend) {
	if o == nil {
		return
	}
	b.Free(o.Merged)
	b.Free(o.Deepstack...)
}

// posEmbed interpolates the learned position table for an h×w patch grid
// and returns it in merge-block order as [h·w, hidden] float32 values,
// rounded once to dtype act: bilinear coordinates from a float64
// linspace(0, n−1, steps) rounded to float32 (ERRATA F9), float32 weights,
// four float32 products summed in order. transformers 5.17 computes the
// interpolation in float32 even for a BF16 model and rounds the sum once
// (bit-exact against its BF16 embed_plus_pos; the per-product BF16 rounding
// H3-ENCODERS-VAES.md §7.4 describes differs in ~30 % of the elements).
func (vt *VisionTower) posEmbed(g Grid, act compute.DType) []float32 {
	c := vt.cfg
	n := c.PositionGrid()
	dv := c.Vision.HiddenSize
	hf, hd := bilinearAxis(g.H, n)
	wf, wd := bilinearAxis(g.W, n)
	rows, cols := mergeBlockCoords(g.H, g.W, c.Vision.SpatialMergeSize)
	out := make([]float32, len(rows)*dv)
	for i := range rows {
		r, cl := rows[i], cols[i]
		h0, w0 := hf[r], wf[cl]
		h1, w1 := min(h0+1, n-1), min(w0+1, n-1)
		dh, dw := hd[r], wd[cl]
		wts := [4]float32{(1 - dh) * (1 - dw), (1 - dh) * dw, dh * (1 - dw), dh * dw}
		idx := [4]int{h0*n + w0, h0*n + w1, h1*n + w0, h1*n + w1}
		o := out[i*dv : (i+1)*dv]
		for k := 0; k < dv; k++ {
			s := float32(vt.posTable[idx[0]*dv+k] * wts[0])
			for q := 1; q < 4; q++ {
				s += float32(vt.posTable[idx[q]*dv+k] * wts[q])
			}
			o[k] = compute.Round(act, s)
		}
	}
	return out
}

// bilinearAxis returns, for the steps points of linspace(0, n−1, steps)
// rounded to float32, their floors and fractional parts.
func bilinearAxis(steps, n int) (floor []int, frac []float32) {
	floor = make([]int, steps)
	frac = make([]float32, steps)
	for i, x := range Linspace64(0, float64(n-1), steps) {
		c := float32(x)
		f := int(c)
		floor[i], frac[i] = f, c-float32(f)
	}
	return
}

// Linspace64 is torch.linspace(start, end, steps) in float64: the first
// half counts up from start, the second half down from end (torch's
// symmetric formula).
func Linspace64(start, end float64, steps int) []float64 {
	out := make([]float64, steps)
	if steps == 1 {
		out[0] = start
		return out
	}
	step := (end - start) / float64(steps-1)
	half := steps / 2
	for i := range out {
		if i < half {
			out[i] = start + step*float64(i)
		} else {
			out[i] = end - step*float64(steps-1-i)
		}
	}
	return out
}

// forward encodes one grid_t = 1 block. pixels is [g.H·g.W, 1536] in
// merge-block order (the processor's rows for this block). tr receives the
// intermediates under "vision.*" names.
func (vt *VisionTower) forward(b compute.Backend, pixels []float32, g Grid, act compute.DType, tr tracer) (out *VisionOutput) {
	c := vt.cfg
	v := c.Vision
	N := g.H * g.W
	dv, H, hd := v.HiddenSize, v.NumHeads, c.VisionHeadDim()
	a := nn.NewArena(b)
	defer a.Release()

	px := a.New(act, N, c.PatchInputs())
	upload(b, px, pixels)
	x := a.New(act, N, dv)
	vt.patch.Forward(b, x, px)
	tr.put("vision.patch_embed", x)
	pos := a.New(act, N, dv)
	upload(b, pos, vt.posEmbed(g, act))
	b.Add(x, x, pos)
	tr.put("vision.embed_plus_pos", x)

	cosH, sinH := VisionRopeTables(c, g)
	cos := a.New(compute.F32, N, hd/2)
	sin := a.New(compute.F32, N, hd/2)
	upload(b, cos, cosH)
	upload(b, sin, sinH)
	if tr.on() {
		tr.putHost("vision.rope_cos", nn.DuplicateHalves(cosH, hd/2), N, hd)
		tr.putHost("vision.rope_sin", nn.DuplicateHalves(sinH, hd/2), N, hd)
	}

	y := a.New(act, N, dv)
	qkv := a.New(act, N, 3*dv)
	qkvT := a.New(act, 3, H, N, hd)
	rot := a.New(compute.F32, H, N, hd)
	att := a.New(act, H, N, hd)
	attT := a.New(act, N, H, hd)
	o := a.New(act, N, dv)
	h1 := a.New(act, N, v.IntermediateSize)
	ap := compute.AttentionParams{Scale: float32(1 / math.Sqrt(float64(hd))), RoundProbs: act != compute.F32}

	out = &VisionOutput{}
	for j, bl := range vt.blocks {
		bl.norm1.Forward(b, y, x)
		bl.qkv.Forward(b, qkv, y)
		nn.SplitHeads(b, qkvT, qkv.Reshape(N, 3, H, hd), compute.QKVPacked)
		q, k, vv := qkvT.Row(0), qkvT.Row(1), qkvT.Row(2)
		// The reference rotates in float32 and casts back to the activation dtype.
		for _, t := range []*compute.Tensor{q, k} {
			if act == compute.F32 {
				b.RoPE(t, t, cos, sin, hd)
			} else {
				b.RoPE(rot, t, cos, sin, hd)
				b.Copy(t, rot)
			}
		}
		nn.AttendOut(b, o, att, attT, q, k, vv, ap, bl.proj)
		b.Add(x, x, o)
		bl.norm2.Forward(b, y, x)
		bl.mlp.Forward(b, o, y, h1)
		b.Add(x, x, o)
		tr.put(fmt.Sprintf("vision.block%d", j), x)
		for k, idx := range v.DeepstackIndexes {
			if idx == j {
				d := vt.deep[k].forward(a, x, act)
				out.Deepstack = append(out.Deepstack, a.Keep(d))
				tr.put(fmt.Sprintf("vision.deepstack%d", k), d)
			}
		}
	}
	out.Merged = a.Keep(vt.merger.forward(a, x, act))
	tr.put("vision.merged", out.Merged)
	return out
}

// forward applies a patch merger to x [N, hidden] and returns [N/m², out].
func (pm *patchMerger) forward(a *nn.Arena, x *compute.Tensor, act compute.DType) *compute.Tensor {
	b := a.Backend()
	N, dv := x.Dim(0), x.Dim(1)
	dm := pm.mlp.Up.In()
	T := N * dv / dm
	y := a.New(act, T, dm)
	if pm.postShuffle {
		pm.norm.Forward(b, y, x.Reshape(T, dm))
	} else {
		pm.norm.Forward(b, y.Reshape(N, dv), x)
	}
	h := a.New(act, T, dm)
	out := a.New(act, T, pm.mlp.Down.Out())
	pm.mlp.Forward(b, out, y, h)
	return out
}

// upload writes float32 host values into t (rounded to t's dtype).
func upload(b compute.Backend, t *compute.Tensor, v []float32) {
	if err := b.Upload(t, compute.EncodeFloat32(t.DType(), v)); err != nil {
		panic(fmt.Errorf("qwen3vl: upload %v: %w", t, err))
	}
}
