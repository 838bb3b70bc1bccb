package qwen3vl

import (
	"fmt"
	"math"

	"h3studio/engine/prompt"
)

// Grid is a vision input's patch grid: T temporal patches (frame pairs), H
// and W patches of PatchSize pixels. Merged tokens form an (H/m)×(W/m) grid
// per temporal patch, m = SpatialMergeSize.
type Grid struct{ T, H, W int }

func (g Grid) String() string { return fmt.Sprintf("[%d %d %d]", g.T, g.H, g.W) }

// Patches is the number of patch rows of the grid.
func (g Grid) Patches() int { return g.T * g.H * g.W }

// Tokens is the number of merged vision tokens (pads) of the grid with
// merge size m.
func (g Grid) Tokens(m int) int { return g.T * (g.H / m) * (g.W / m) }

// Blocks splits a grid into its temporal patches: Qwen3-VL runs every
// temporal patch of a video as its own vision block (grid_t = 1), each with
// its own pad run, attention window and M-RoPE base.
func (g Grid) Blocks() []Grid {
	out := make([]Grid, g.T)
	for i := range out {
		out[i] = Grid{T: 1, H: g.H, W: g.W}
	}
	return out
}

// textInvFreq returns the language model's inverse rotary frequencies
// inv[j] = 1/θ^(2j/head_dim) in float32, computed in the reference's order
// (float32 exponent, float32 power, float32 reciprocal).
func textInvFreq(c *Config) []float32 {
	half := c.Text.HeadDim / 2
	inv := make([]float32, half)
	for j := range inv {
		e := float32(2*j) / float32(c.Text.HeadDim)
		p := float32(math.Pow(c.Theta(), float64(e)))
		inv[j] = 1 / p
	}
	return inv
}

// mropeAxis returns, for each of the head_dim/2 frequencies, the position
// axis (0 t, 1 h, 2 w) that drives it under interleaved M-RoPE: frequency j
// takes the h position when j mod 3 = 1 and j < 3·section[1], the w position
// when j mod 3 = 2 and j < 3·section[2], and the t position otherwise
// (transformers' apply_interleaved_mrope; H3-ENCODERS-VAES.md §6.5).
func mropeAxis(c *Config) []int {
	sec := c.MropeSection()
	ax := make([]int, c.Text.HeadDim/2)
	for j := range ax {
		switch {
		case j%3 == 1 && j < 3*sec[1]:
			ax[j] = 1
		case j%3 == 2 && j < 3*sec[2]:
			ax[j] = 2
		}
	}
	return ax
}

// TextRopeTables returns the language model's rotary cos and sin for L
// positions as [L, head_dim/2] float32 rows (the 128-wide tables of the
// reference are these halves repeated). angle = pos_axis(j)·inv[j] in
// float32, then cos/sin.
func TextRopeTables(c *Config, pos [3][]int64) (cos, sin []float32) {
	inv := textInvFreq(c)
	ax := mropeAxis(c)
	half := len(inv)
	L := len(pos[0])
	cos = make([]float32, L*half)
	sin = make([]float32, L*half)
	for s := 0; s < L; s++ {
		for j := 0; j < half; j++ {
			a := float32(pos[ax[j]][s]) * inv[j]
			cos[s*half+j] = float32(math.Cos(float64(a)))
			sin[s*half+j] = float32(math.Sin(float64(a)))
		}
	}
	return cos, sin
}

// VisionRopeTables returns the vision tower's 2-D rotary cos and sin for
// one grid_t = 1 block as [H·W, head_dim/2] float32 rows in merge-block
// order: the first head_dim/4 angles are row·inv, the next head_dim/4 are
// col·inv, inv[j] = 1/10000^(2j/(head_dim/2)) (transformers'
// Qwen3VLVisionRotaryEmbedding; H3-ENCODERS-VAES.md §7.4).
func VisionRopeTables(c *Config, g Grid) (cos, sin []float32) {
	dim := c.VisionHeadDim() / 2 // rotary "dim" of the reference module
	q := dim / 2
	inv := make([]float32, q)
	for j := range inv {
		e := float32(2*j) / float32(dim)
		inv[j] = 1 / float32(math.Pow(10000, float64(e)))
	}
	rows, cols := mergeBlockCoords(g.H, g.W, c.Vision.SpatialMergeSize)
	n := len(rows)
	cos = make([]float32, n*dim)
	sin = make([]float32, n*dim)
	for i := 0; i < n; i++ {
		for j := 0; j < q; j++ {
			for k, coord := range [2]int{rows[i], cols[i]} {
				a := float32(coord) * inv[j]
				cos[i*dim+k*q+j] = float32(math.Cos(float64(a)))
				sin[i*dim+k*q+j] = float32(math.Sin(float64(a)))
			}
		}
	}
	return cos, sin
}

// mergeBlockCoords returns the (row, col) patch coordinates of an h×w patch
// grid in merge-block order: merged block rows, merged block cols, then the
// m×m patches inside each block (H3-ENCODERS-VAES.md §7.3).
func mergeBlockCoords(h, w, m int) (rows, cols []int) {
	rows = make([]int, 0, h*w)
	cols = make([]int, 0, h*w)
	for br := 0; br < h/m; br++ {
		for bc := 0; bc < w/m; bc++ {
			for ir := 0; ir < m; ir++ {
				for ic := 0; ic < m; ic++ {
					rows = append(rows, br*m+ir)
					cols = append(cols, bc*m+ic)
				}
			}
		}
	}
	return rows, cols
}

// VisionRun is one vision block of a token sequence: its pad run and grid.
type VisionRun struct {
	Video      bool // <|video_pad|> run (else <|image_pad|>)
	Start, Len int  // pad positions [Start, Start+Len)
	Grid       Grid // grid_t = 1 block grid
	Input      int  // index into Input.Images or Input.Videos
	Block      int  // temporal block within that input
}

// VisionRuns matches the pad runs of ids with the image and video grids, in
// sequence order (image runs take images in order, video runs take the
// temporal blocks of the videos in order), and checks every run's length.
func (c *Config) VisionRuns(ids []int64, images, videos []Grid) ([]VisionRun, error) {
	m := c.Vision.SpatialMergeSize
	type block struct {
		g            Grid
		input, block int
	}
	var imgs, vids []block
	for i, g := range images {
		if g.T != 1 {
			return nil, fmt.Errorf("qwen3vl: image %d: grid %v: an image has one temporal patch", i+1, g)
		}
		imgs = append(imgs, block{g, i, 0})
	}
	for i, g := range videos {
		for b, bg := range g.Blocks() {
			vids = append(vids, block{bg, i, b})
		}
	}
	var runs []VisionRun
	ii, vi := 0, 0
	for s := 0; s < len(ids); {
		tok := ids[s]
		if tok != c.ImageTokenID && tok != c.VideoTokenID {
			s++
			continue
		}
		e := s
		for e < len(ids) && ids[e] == tok {
			e++
		}
		video := tok == c.VideoTokenID
		var bl block
		kind := "image"
		if video {
			kind = "video"
			if vi >= len(vids) {
				return nil, fmt.Errorf("qwen3vl: token %d: a %s pad run with no %s block left (%d given)", s, kind, kind, len(vids))
			}
			bl = vids[vi]
			vi++
		} else {
			if ii >= len(imgs) {
				return nil, fmt.Errorf("qwen3vl: token %d: an %s pad run with no %s left (%d given)", s, kind, kind, len(imgs))
			}
			bl = imgs[ii]
			ii++
		}
		if want := bl.g.Tokens(m); e-s != want {
			return nil, fmt.Errorf("qwen3vl: token %d: %s pad run of %d tokens, grid %v needs %d", s, kind, e-s, bl.g, want)
		}
		runs = append(runs, VisionRun{Video: video, Start: s, Len: e - s, Grid: bl.g, Input: bl.input, Block: bl.block})
		s = e
	}
	if ii != len(imgs) || vi != len(vids) {
		return nil, fmt.Errorf("qwen3vl: %d of %d image blocks and %d of %d video blocks have pad runs in the sequence", ii, len(imgs), vi, len(vids))
	}
	return runs, nil
}

// PositionIDs computes the (t, h, w) M-RoPE position of every token, as
// transformers' Qwen3VLModel.get_rope_index does with every vision block at
// grid_t = 1 (H3-ENCODERS-VAES.md §5.1), with the presentation's own rule
// (engine/prompt.PositionIDs): text tokens (including the vision start/end
// markers) advance a running position on all three axes; the pads of a
// block at base b get (b, b+r, b+c) for merged row r and column c, and text
// resumes at b + max(rows, cols). runs must come from VisionRuns.
func (c *Config) PositionIDs(ids []int64, runs []VisionRun) [3][]int64 {
	m := c.Vision.SpatialMergeSize
	in := make([]int, len(ids))
	for i, id := range ids {
		in[i] = int(id)
	}
	grids := make([]prompt.Grid, len(runs))
	for i, r := range runs {
		grids[i] = prompt.Grid{H: r.Grid.H / m, W: r.Grid.W / m}
	}
	p, err := prompt.PositionIDs(in, []int{int(c.ImageTokenID), int(c.VideoTokenID)}, grids)
	if err != nil {
		panic("qwen3vl: position ids of validated runs: " + err.Error()) // a bug: VisionRuns checked every run
	}
	var pos [3][]int64
	for a := range pos {
		pos[a] = make([]int64, len(ids))
		for i, v := range p[a] {
			pos[a][i] = int64(v)
		}
	}
	return pos
}

// MergedGrid is the presentation's grid of a vision block (merged tokens,
// engine/prompt.Grid) for a patch grid.
func (c *Config) MergedGrid(g Grid) prompt.Grid {
	m := c.Vision.SpatialMergeSize
	return prompt.Grid{H: g.H / m, W: g.W / m}
}

// Tags returns the H3 DiT modality tag of every conditioning row: 0 for
// every row of a vision block (start and end markers and pads), 1 for text
// (H3-ENCODERS-VAES.md §1, §5).
func (c *Config) Tags(ids []int64) []int64 {
	out := make([]int64, len(ids))
	for i, t := range ids {
		switch t {
		case c.VisionStartTokenID, c.VisionEndTokenID, c.ImageTokenID, c.VideoTokenID:
			out[i] = 0
		default:
			out[i] = 1
		}
	}
	return out
}
