package videovae

import (
	"context"
	"fmt"

	"h3studio/engine/compute"
	"h3studio/engine/nn"
	"h3studio/engine/safetensors"
)

// Encoder is the causal 3-D CNN encoder followed by quant_conv: pixels
// [3, T, H, W] (ImageNet-normalized) in, posterior moments
// [2·24, ⌈T/4⌉, H/16, W/16] out. Mirrors diffusers MiniMaxH3VideoEncoder3d
// (spec §8.3–§8.4).
type Encoder struct {
	cfg     *Config
	convIn  conv3d
	levels  []encLevel
	normOut groupNorm
	convOut conv3d
	quant   nn.Linear // 1×1×1 Conv3d [48, 48]
}

type encLevel struct {
	resnets []resnet
	down    *conv3d // strided downsampling conv (nil when both factors are 1)
	tStride int
	sStride int
}

// resnet is MiniMaxH3VideoResnetBlock3d.
type resnet struct {
	norm1, norm2 groupNorm
	conv1, conv2 conv3d
	shortcut     *nn.Linear // 1×1×1 conv when the channel count changes
}

// conv3d is a Conv3d weight [out, in, kt, kh, kw] and bias.
type conv3d struct{ w, b *compute.Tensor }

// groupNorm is a time-isolated GroupNorm's affine parameters, plus their
// copies tiled over T frames (built on first use per T).
type groupNorm struct {
	w, b  *compute.Tensor
	tiled map[int][2]*compute.Tensor
}

// tensors lists the encoder's weights, the tiled norm copies included.
func (e *Encoder) tensors() []*compute.Tensor {
	ts := append(e.convIn.tensors(), e.normOut.tensors()...)
	ts = append(ts, e.convOut.tensors()...)
	ts = append(ts, e.quant.Tensors()...)
	for _, lv := range e.levels {
		for _, r := range lv.resnets {
			ts = append(ts, r.norm1.tensors()...)
			ts = append(ts, r.norm2.tensors()...)
			ts = append(ts, r.conv1.tensors()...)
			ts = append(ts, r.conv2.tensors()...)
			if r.shortcut != nil {
				ts = append(ts, r.shortcut.Tensors()...)
			}
		}
		if lv.down != nil {
			ts = append(ts, lv.down.tensors()...)
		}
	}
	return ts
}

func (c conv3d) tensors() []*compute.Tensor { return []*compute.Tensor{c.w, c.b} }

func (gn groupNorm) tensors() []*compute.Tensor {
	ts := []*compute.Tensor{gn.w, gn.b}
	for _, t := range gn.tiled {
		ts = append(ts, t[0], t[1])
	}
	return ts
}

func bindConv(w *safetensors.Binder, name string, out, in, k int) conv3d {
	return conv3d{w: w.Tensor(name+".weight", out, in, k, k, k), b: w.Tensor(name+".bias", out)}
}

func bindNorm(w *safetensors.Binder, name string, c int) groupNorm {
	return groupNorm{w: w.Tensor(name+".weight", c), b: w.Tensor(name+".bias", c), tiled: map[int][2]*compute.Tensor{}}
}

func loadEncoder(w *safetensors.Binder, cfg *Config) *Encoder {
	n := names{cfg.Layout}
	ch := cfg.BlockOutChannels
	e := &Encoder{cfg: cfg}
	e.convIn = bindConv(w, "encoder.conv_in", ch[0], cfg.InChannels, 3)
	in := ch[0]
	for l, out := range ch {
		var lv encLevel
		for i := 0; i < cfg.LayersPerBlock; i++ {
			p := n.resnet(l, i)
			cin := out
			if i == 0 {
				cin = in
			}
			r := resnet{
				norm1: bindNorm(w, p+"norm1", cin),
				conv1: bindConv(w, p+"conv1", out, cin, 3),
				norm2: bindNorm(w, p+"norm2", out),
				conv2: bindConv(w, p+"conv2", out, out, 3),
			}
			if cin != out {
				s := conv1x1(w, p+n.shortcut(), out, cin)
				r.shortcut = &s
			}
			lv.resnets = append(lv.resnets, r)
		}
		lv.tStride, lv.sStride = cfg.TemporalDownsample[l], cfg.SpatialDownsample[l]
		if lv.tStride*lv.sStride > 1 {
			d := bindConv(w, n.downsample(l), out, out, 3)
			lv.down = &d
		}
		e.levels = append(e.levels, lv)
		in = out
	}
	last := ch[len(ch)-1]
	e.normOut = bindNorm(w, "encoder.norm_out", last)
	e.convOut = bindConv(w, "encoder.conv_out", 2*cfg.LatentChannels, last, 3)
	e.quant = conv1x1(w, "quant_conv", 2*cfg.LatentChannels, 2*cfg.LatentChannels)
	return e
}

// encRun is one encoder pass's scratch state.
type encRun struct {
	e   *Encoder
	b   compute.Backend
	a   *nn.Arena
	ctx context.Context
}

// normSiLU computes SiLU(GroupNorm(x)) with statistics per latent frame
// (use_t_isolated_gn): x [C, T, H, W] is transposed to [T·C, H·W], normed
// with T·groups groups and the affine parameters tiled T times, and
// transposed back.
func (r *encRun) normSiLU(x *compute.Tensor, gn *groupNorm) *compute.Tensor {
	C, T, H, W := x.Dim(0), x.Dim(1), x.Dim(2), x.Dim(3)
	xt := r.a.New(compute.F32, T, C, H*W)
	r.b.Transpose(xt, x.Reshape(C, T, H*W), 1, 0, 2)
	wt, bt := gn.tiledFor(r.b, T)
	y := r.a.New(compute.F32, T*C, H*W)
	r.b.GroupNorm(y, xt.Reshape(T*C, H*W), wt, bt, T*r.e.cfg.NormGroups, r.e.cfg.NormEps)
	r.a.Free(xt)
	r.b.Unary(y, y, compute.SiLU)
	out := r.a.New(compute.F32, C, T, H, W)
	r.b.Transpose(out.Reshape(C, T, H*W), y.Reshape(T, C, H*W), 1, 0, 2)
	r.a.Free(y)
	return out
}

func (gn *groupNorm) tiledFor(b compute.Backend, T int) (w, bias *compute.Tensor) {
	if t, ok := gn.tiled[T]; ok {
		return t[0], t[1]
	}
	C := gn.w.Dim(0)
	w = compute.MustAlloc(b, compute.F32, T, C)
	bias = compute.MustAlloc(b, compute.F32, T, C)
	for t := 0; t < T; t++ {
		b.Copy(w.Row(t), gn.w)
		b.Copy(bias.Row(t), gn.b)
	}
	w, bias = w.Reshape(T*C), bias.Reshape(T*C)
	gn.tiled[T] = [2]*compute.Tensor{w, bias}
	return w, bias
}

func (gn *groupNorm) free(b compute.Backend) {
	for k, t := range gn.tiled {
		b.Free(t[0], t[1])
		delete(gn.tiled, k)
	}
}

// causalConv is MiniMaxH3VideoCausalConv3d: pad space by sp on every side
// (the config's spatial mode) and, for a temporal kernel of 3, time by two
// zero frames in front; then a valid convolution with stride.
func (r *encRun) causalConv(x *compute.Tensor, c conv3d, sp int, stride [3]int) *compute.Tensor {
	return r.conv(x, c, [3]int{2, sp, sp}, [3]int{0, sp, sp}, stride)
}

// conv pads x [C, T, H, W] (time with zeros, space with the config's mode)
// and convolves.
func (r *encRun) conv(x *compute.Tensor, c conv3d, before, after, stride [3]int) *compute.Tensor {
	// A convolution of a reference video's tile takes seconds on the CPU:
	// a cancel is honoured before each one, not only at block boundaries,
	// and inside it on an Interruptible backend (ForwardContext).
	if err := r.ctx.Err(); err != nil {
		compute.Try(fmt.Errorf("videovae: encoder stopped: %w", err))
	}
	C, T, H, W := x.Dim(0), x.Dim(1), x.Dim(2), x.Dim(3)
	k := [3]int{c.w.Dim(2), c.w.Dim(3), c.w.Dim(4)}
	if k[0] == 1 {
		before[0] = 0
	}
	in := x
	if before != [3]int{} || after != [3]int{} {
		sm := compute.PadZeros
		if r.e.cfg.SpatialPaddingReflect {
			sm = compute.PadReflect
		}
		in = r.a.New(compute.F32, C, T+before[0]+after[0], H+before[1]+after[1], W+before[2]+after[2])
		r.b.Pad(in, x, compute.PadParams{
			Before: []int{0, before[0], before[1], before[2]},
			After:  []int{0, after[0], after[1], after[2]},
			Modes:  []compute.PadMode{compute.PadZeros, compute.PadZeros, sm, sm},
		})
	}
	out := []int{c.w.Dim(0)}
	for a := 0; a < 3; a++ {
		out = append(out, compute.ConvOutSize(in.Dim(a+1), k[a], stride[a], 1, 0, 0))
	}
	y := r.a.New(compute.F32, out...)
	r.b.Conv(y, in, c.w, c.b, compute.ConvParams{Stride: stride[:]})
	if in != x {
		r.a.Free(in)
	}
	return y
}

// linear1x1 applies a 1×1×1 convolution (a per-voxel Linear) to x [C, T, H, W].
func (r *encRun) linear1x1(x *compute.Tensor, l nn.Linear) *compute.Tensor {
	T, H, W := x.Dim(1), x.Dim(2), x.Dim(3)
	w := l.W.Reshape(l.Out(), l.In(), 1, 1, 1)
	y := r.a.New(compute.F32, l.Out(), T, H, W)
	r.b.Conv(y, x, w, l.B, compute.ConvParams{})
	return y
}

// Forward encodes one pixel tile x [3, T, H, W] into moments
// [48, T', H/16, W/16]. Allocation failures panic (see catch).
func (e *Encoder) Forward(b compute.Backend, x *Volume) (out *Volume, err error) {
	return e.ForwardContext(context.Background(), b, x)
}

// ForwardContext is Forward that stops once ctx is cancelled: before the
// next convolution, and inside one on an Interruptible backend (a
// convolution of a 768-class reference video's tile takes seconds on the
// CPU; the cancel must land in well under one).
func (e *Encoder) ForwardContext(ctx context.Context, b compute.Backend, x *Volume) (out *Volume, err error) {
	defer compute.Recover(&err)
	defer compute.WatchContext(b, ctx)()
	if x.C != e.cfg.InChannels {
		return nil, fmt.Errorf("videovae: encoder input has %d channels, want %d", x.C, e.cfg.InChannels)
	}
	r := &encRun{e: e, b: b, a: nn.NewArena(b), ctx: ctx}
	defer r.a.Release()
	h := r.a.New(compute.F32, x.C, x.T, x.H, x.W)
	compute.Try(b.Upload(h, compute.EncodeFloat32(compute.F32, x.Data)))
	one := [3]int{1, 1, 1}
	// step replaces h by f(h) and frees the old h.
	step := func(next *compute.Tensor) {
		r.a.Free(h)
		h = next
	}
	step(r.causalConv(h, e.convIn, 1, one))
	for _, lv := range e.levels {
		for _, rn := range lv.resnets {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("videovae: encoder stopped: %w", err)
			}
			t := r.normSiLU(h, &rn.norm1)
			t2 := r.causalConv(t, rn.conv1, 1, one)
			r.a.Free(t)
			t = r.normSiLU(t2, &rn.norm2)
			r.a.Free(t2)
			t2 = r.causalConv(t, rn.conv2, 1, one)
			r.a.Free(t)
			if rn.shortcut != nil {
				res := r.linear1x1(h, *rn.shortcut)
				b.Add(t2, res, t2)
				r.a.Free(res)
			} else {
				b.Add(t2, h, t2)
			}
			step(t2)
		}
		if lv.down != nil {
			s := lv.sStride
			after := [3]int{}
			if s == 2 {
				after = [3]int{0, 1, 1} // asymmetric bottom/right pad
			}
			step(r.conv(h, *lv.down, [3]int{2, 0, 0}, after, [3]int{lv.tStride, s, s}))
		}
	}
	t := r.normSiLU(h, &e.normOut)
	step(t)
	step(r.causalConv(h, e.convOut, 1, one))
	step(r.linear1x1(h, e.quant))
	v, err := compute.ToFloat32(h)
	if err != nil {
		return nil, fmt.Errorf("videovae: encoder: %w", err)
	}
	return WrapVolume(h.Dim(0), h.Dim(1), h.Dim(2), h.Dim(3), v)
}

// release drops the per-T tiled norm parameters.
func (e *Encoder) release(b compute.Backend) {
	for i := range e.levels {
		for j := range e.levels[i].resnets {
			e.levels[i].resnets[j].norm1.free(b)
			e.levels[i].resnets[j].norm2.free(b)
		}
	}
	e.normOut.free(b)
}
