package dit

import (
	"context"
	"fmt"

	"h3studio/engine/compute"
	"h3studio/engine/nn"
)

// Step is the per-step input of a forward.
type Step struct {
	// Video holds the video rows in VideoIndices order (conditions, then
	// the target latents), [Nv, PatchDim], any float dtype (F32 in the
	// sampler): the reference's hidden_states.
	Video *compute.Tensor
	// Audio holds the audio rows in AudioIndices order, [Na, AudioInChannels].
	Audio *compute.Tensor
	// TimestepIndex gives, for every packed row, the index of its timestep
	// in Tables.Timesteps (the reference's timestep_indices, against the
	// request-wide table instead of the step's distinct values).
	TimestepIndex []int64
}

// Velocity receives a forward's outputs: F32 (or any float dtype) tensors
// [Nv, PatchDim] and [Na, AudioInChannels], all video and audio rows in
// index order, conditions included (the reference returns them unmasked).
type Velocity struct {
	Video, Audio *compute.Tensor
}

// CoreMode selects how a forward treats the block stack (h3.c --core-reuse,
// H3-DIT §13.3).
type CoreMode uint8

// Core modes.
const (
	// CoreRun runs every active block.
	CoreRun CoreMode = iota
	// CoreCache runs the blocks and keeps residual = h_after − h_before
	// (activation dtype) on the Sequence.
	CoreCache
	// CoreReuse skips the blocks: h = freshly packed input + cached residual.
	// Input projections, final layer and heads still run.
	CoreReuse
)

// TokenSpan is a token-reduction interval (h3.c --token-reduction, H3-DIT
// §13.4): blocks [Begin, End) run on a sequence whose target video rows are
// pooled in horizontal pairs. End may equal NumLayers.
type TokenSpan struct{ Begin, End int }

// ForwardOptions select the speed controls of one forward. The zero value
// is the exact path.
type ForwardOptions struct {
	// Active marks the blocks that run (nil: all). See SelectBlocks.
	Active []bool
	Core   CoreMode
	// Reduce, when non-nil, runs its block span token-reduced.
	Reduce *TokenSpan
}

// Forward evaluates the transformer once: MiniMaxH3Transformer3DModel.forward
// with the modulation tables precomputed. It packs [text | conditions |
// audio | video] (text rows from s.Text, video and audio rows through the
// F32 patch projections), runs the active blocks, the final AdaLN norm and
// both heads, and writes the velocities of all video and audio rows to out.
// ctx is checked before every block; a cancelled forward returns an error
// wrapping ctx.Err().
func (m *Model) Forward(ctx context.Context, s *Sequence, tab *Tables, st Step, out Velocity, fo ForwardOptions) (err error) {
	defer compute.Recover(&err)
	c := m.cfg
	S, H := s.rows, c.HiddenSize
	nv, na := len(s.Layout.VideoIndices), len(s.Layout.AudioIndices)
	switch {
	case st.Video == nil || st.Video.NumElements() != nv*c.PatchDim() || st.Video.Dim(-1) != c.PatchDim():
		return fmt.Errorf("dit: video rows %v: want [%d, %d]", st.Video, nv, c.PatchDim())
	case st.Audio == nil || st.Audio.NumElements() != na*c.AudioInChannels || st.Audio.Dim(-1) != c.AudioInChannels:
		return fmt.Errorf("dit: audio rows %v: want [%d, %d]", st.Audio, na, c.AudioInChannels)
	case out.Video == nil || out.Video.NumElements() != nv*c.PatchDim():
		return fmt.Errorf("dit: video velocity %v: want [%d, %d]", out.Video, nv, c.PatchDim())
	case out.Audio == nil || out.Audio.NumElements() != na*c.AudioInChannels:
		return fmt.Errorf("dit: audio velocity %v: want [%d, %d]", out.Audio, na, c.AudioInChannels)
	case len(st.TimestepIndex) != S:
		return fmt.Errorf("dit: %d timestep indices for %d rows", len(st.TimestepIndex), S)
	case fo.Active != nil && len(fo.Active) != c.NumLayers:
		return fmt.Errorf("dit: %d active flags for %d blocks", len(fo.Active), c.NumLayers)
	case fo.Core == CoreReuse && s.coreResidual == nil:
		return fmt.Errorf("dit: core reuse before any core residual was cached")
	case tab == nil || tab.Final == nil || len(tab.Blocks) != c.NumLayers:
		return fmt.Errorf("dit: modulation tables missing")
	}
	if r := fo.Reduce; r != nil {
		if r.Begin < 0 || r.Begin >= r.End || r.End > c.NumLayers {
			return fmt.Errorf("dit: token-reduction span [%d, %d) outside 0 ≤ begin < end ≤ %d", r.Begin, r.End, c.NumLayers)
		}
		if s.Layout.TargetGrid == [3]int{} {
			return fmt.Errorf("dit: token reduction needs the target video grid of the layout")
		}
	}
	T := int64(len(tab.Timesteps))
	for r, ti := range st.TimestepIndex {
		if ti < 0 || ti >= T {
			return fmt.Errorf("dit: row %d: timestep index %d outside the %d tabled timesteps", r, ti, T)
		}
	}
	if err := cancelled(ctx, "before the forward"); err != nil {
		return err
	}
	if err := m.bindEdge(); err != nil {
		return err
	}
	prof := m.startProfile()
	a := nn.NewArena(m.b)
	defer a.Release()

	// 1. Pack the sequence.
	h := a.New(m.dt, S, H)
	ve := a.New(m.dt, nv, H)
	m.videoIn.Forward(m.b, ve, st.Video.Reshape(nv, c.PatchDim()))
	m.b.ScatterRows(h, ve, s.videoIdx)
	ae := a.New(m.dt, na, H)
	m.audioIn.Forward(m.b, ae, st.Audio.Reshape(na, c.AudioInChannels))
	m.b.ScatterRows(h, ae, s.audioIdx)
	text := s.Text
	if text.DType() != m.dt {
		text = a.New(m.dt, text.Shape()...)
		m.b.Copy(text, s.Text)
	}
	m.b.ScatterRows(h, text, s.textIdx)

	// 2. Row → table row maps.
	adaln := make([]int64, S)
	final := make([]int64, S)
	for r, ti := range st.TimestepIndex {
		row := tab.RowOf[ti*Modalities+s.Layout.Tags[r]]
		if row < 0 {
			return fmt.Errorf("dit: row %d (tag %d) needs the modulation of timestep %v, which Tables did not keep",
				r, s.Layout.Tags[r], tab.Timesteps[ti])
		}
		adaln[r] = int64(row)
		final[r] = ti
	}
	adalnT := m.indexTensor(a, adaln)
	finalT := m.indexTensor(a, final)
	if m.opts.Trace != nil {
		m.traceHost(a, "rope_cos", nn.DuplicateHalves(s.cosHost, len(s.cosHost)/S), S, 2*len(s.cosHost)/S)
		m.traceHost(a, "rope_sin", nn.DuplicateHalves(s.sinHost, len(s.sinHost)/S), S, 2*len(s.sinHost)/S)
	}

	// 3. The block stack (or its cached residual).
	if fo.Core == CoreReuse {
		m.b.Add(h, h, s.coreResidual)
	} else {
		if fo.Core == CoreCache {
			if s.coreInput == nil {
				s.coreInput = compute.MustAlloc(m.b, m.dt, S, H)
			}
			m.b.Copy(s.coreInput, h)
		}
		if err := m.runCore(ctx, a, s, tab, h, adaln, adalnT, fo); err != nil {
			return err
		}
		if fo.Core == CoreCache {
			if s.coreResidual == nil {
				s.coreResidual = compute.MustAlloc(m.b, m.dt, S, H)
			}
			neg := a.New(m.dt, S, H)
			m.b.Scale(neg, s.coreInput, -1, 0)
			m.b.Add(s.coreResidual, h, neg)
		}
		m.coreForwards.Add(1)
	}

	// 4. Final AdaLN norm and the two heads (float32).
	n := m.final.Forward(m.b, a, h, tab.Final, finalT)
	m.trace("norm_out", n)
	if m.opts.Trace != nil {
		all := a.New(compute.F32, S, c.PatchDim())
		m.videoOut.Forward(m.b, all, n)
		m.trace("proj_out_all_rows", all)
	}
	nvRows := a.New(m.dt, nv, H)
	m.b.GatherRows(nvRows, n, s.videoIdx)
	m.videoOut.Forward(m.b, out.Video.Reshape(nv, c.PatchDim()), nvRows)
	naRows := a.New(m.dt, na, H)
	m.b.GatherRows(naRows, n, s.audioIdx)
	m.audioOut.Forward(m.b, out.Audio.Reshape(na, c.AudioInChannels), naRows)
	if err := prof.finish(); err != nil {
		return err
	}
	m.forwards.Add(1)
	return nil
}

func (m *Model) indexTensor(a *nn.Arena, v []int64) *compute.Tensor {
	t := a.New(compute.I32, len(v))
	compute.Try(m.b.Upload(t, compute.EncodeInt64(compute.I32, v)))
	return t
}

func (m *Model) traceHost(a *nn.Arena, name string, v []float32, rows, cols int) {
	t := a.New(compute.F32, rows, cols)
	compute.Try(m.b.Upload(t, compute.EncodeFloat32(compute.F32, v)))
	m.trace(name, t)
}

// runCore runs the active blocks over h, token-reduced inside fo.Reduce.
func (m *Model) runCore(ctx context.Context, a *nn.Arena, s *Sequence, tab *Tables, h *compute.Tensor, adaln []int64, adalnT *compute.Tensor, fo ForwardOptions) error {
	N := m.cfg.NumLayers
	active := func(i int) bool { return fo.Active == nil || fo.Active[i] }
	cur, rows, rope := h, adalnT, &s.rope
	var red *reduction
	var pooledIn *compute.Tensor
	// The cross-block hand-off (Links): carry holds the attention input of
	// block carryFor, written by the previous block's MLP residual.
	var carry *compute.Tensor
	carryFor := -1
	handOff := m.fz.cross && m.fz.gate
	// boundary reports whether the token-reduced span starts or ends after
	// block i and at or before block j (the rows change in between).
	boundary := func(i, j int) bool {
		r := fo.Reduce
		return r != nil && ((i < r.Begin && r.Begin <= j) || (i < r.End && r.End <= j))
	}
	leave := func() {
		red.expand(m.b, a, h, cur, pooledIn)
		cur, rows, rope, red = h, adalnT, &s.rope, nil
	}
	for i := 0; i < N; i++ {
		if r := fo.Reduce; r != nil && i == r.Begin {
			var err error
			if red, err = s.reduction(m); err != nil {
				return err
			}
			cur, pooledIn = red.pool(m.b, a, h)
			rows = m.indexTensor(a, red.modRows(adaln))
			rope = &red.rope
		}
		if r := fo.Reduce; r != nil && i == r.End && red != nil {
			leave()
		}
		if !active(i) {
			continue
		}
		if tab.Blocks[i] == nil {
			return fmt.Errorf("dit: block %d is active but its modulation table was pruned", i)
		}
		if err := cancelled(ctx, fmt.Sprintf("before block %d", i)); err != nil {
			return err
		}
		blk, err := m.bindBlock(i)
		if err != nil {
			return err
		}
		if m.opts.Residency == compute.Streaming {
			// Bind the next active block (wrapping to the first one for the
			// next forward) while this one runs: two blocks at most; and
			// have its weights read from disk meanwhile.
			for j := 1; j <= N; j++ {
				if k := (i + j) % N; active(k) {
					if k != i && m.blocks[k] == nil {
						m.readAhead.Add(m.w.Sub(m.n.block(k)).ReadAhead(m.n.blockAdaLN()))
						if _, err := m.bindBlock(k); err != nil {
							return err
						}
					}
					break
				}
			}
		}
		var links Links
		if carryFor == i {
			links.In = carry
		}
		if handOff {
			j := i + 1
			for j < N && !active(j) {
				j++
			}
			if j < N && !boundary(i, j) && tab.Blocks[j] != nil {
				nb, err := m.bindBlock(j) // runs next: bound now or already (streaming)
				if err != nil {
					return err
				}
				if carry == nil || carry.Dim(0) != cur.Dim(0) {
					if carry != nil {
						a.Free(carry)
					}
					carry = a.Like(cur)
				}
				links.Next, links.NextMod, links.NextIn = nb, Modulation{Table: tab.Blocks[j], Rows: rows}, carry
				carryFor = j
			}
		}
		ba := nn.NewArena(m.b)
		blk.Forward(m.b, ba, cur, Modulation{Table: tab.Blocks[i], Rows: rows}, rope, links)
		ba.Release()
		if m.opts.Residency == compute.Streaming {
			m.releaseBlock(i)
		}
		m.blocksRun.Add(1)
		if red != nil {
			m.reducedBlocks.Add(1)
		} else {
			m.trace(fmt.Sprintf("block%d.out", i), h)
		}
	}
	if red != nil {
		leave()
	}
	return nil
}
