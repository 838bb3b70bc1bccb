package videovae

import (
	"fmt"
)

// AxisPlan lays tiles of Tile pixels over Length pixels of one axis.
// Consecutive tiles overlap by Overlaps[i] (len(Starts)−1 values) and the
// last tile ends exactly at Length. A single tile spans the whole axis
// (Tile == Length, no overlaps).
type AxisPlan struct {
	Length, Tile int
	Starts       []int
	Overlaps     []int
}

// Count is the number of tiles along the axis.
func (a AxisPlan) Count() int { return len(a.Starts) }

// PlanAxis mirrors diffusers AutoencoderKLMiniMaxH3._split_tiles
// (H3-ENCODERS-VAES.md §8.7): the fewest tiles whose union covers length
// with every overlap at least minOverlap, the spare pixels then added to
// the overlaps round-robin in steps of unit (the spatial compression ratio)
// so that every tile boundary stays latent-aligned. It fails when the tiles
// cannot cover the axis exactly on the latent grid.
func PlanAxis(length, tile, minOverlap, unit int) (AxisPlan, error) {
	if unit < 1 {
		return AxisPlan{}, fmt.Errorf("videovae: tile plan: unit %d must be positive", unit)
	}
	if length < 1 || length%unit != 0 {
		return AxisPlan{}, fmt.Errorf("videovae: tile plan: canvas extent %d px is not a positive multiple of the %d-px latent grid", length, unit)
	}
	if tile < unit || tile%unit != 0 {
		return AxisPlan{}, fmt.Errorf("videovae: tile plan: tile size %d px is not a positive multiple of the %d-px latent grid", tile, unit)
	}
	if tile >= length {
		return AxisPlan{Length: length, Tile: length, Starts: []int{0}}, nil
	}
	if minOverlap < 0 || minOverlap%unit != 0 || minOverlap >= tile {
		return AxisPlan{}, fmt.Errorf("videovae: tile plan: minimum overlap %d px must be a multiple of %d px and smaller than the %d-px tile, or tiles cannot cover the canvas", minOverlap, unit, tile)
	}
	n := (length + tile - 1) / tile
	for tile*n-minOverlap*(n-1) < length {
		n++
	}
	ov := make([]int, n-1)
	for i := range ov {
		ov[i] = minOverlap
	}
	spare := tile*n - minOverlap*(n-1) - length
	for i := 0; i < spare/unit; i++ {
		ov[i%(n-1)] += unit
	}
	starts := make([]int, n)
	for i := 1; i < n; i++ {
		starts[i] = starts[i-1] + tile - ov[i-1]
	}
	p := AxisPlan{Length: length, Tile: tile, Starts: starts, Overlaps: ov}
	if err := p.Validate(unit); err != nil {
		return AxisPlan{}, err
	}
	return p, nil
}

// Validate checks that the tiles cover [0, Length) exactly, each overlap
// lies within both neighbours, and every boundary is on the unit grid.
func (a AxisPlan) Validate(unit int) error {
	n := len(a.Starts)
	switch {
	case n == 0:
		return fmt.Errorf("videovae: tile plan has no tiles")
	case len(a.Overlaps) != n-1:
		return fmt.Errorf("videovae: tile plan: %d tiles need %d overlaps, have %d", n, n-1, len(a.Overlaps))
	case a.Starts[0] != 0:
		return fmt.Errorf("videovae: tile plan: first tile starts at %d, not 0", a.Starts[0])
	case a.Starts[n-1]+a.Tile != a.Length:
		return fmt.Errorf("videovae: tile plan cannot cover the canvas: the last tile ends at %d px, the canvas at %d px", a.Starts[n-1]+a.Tile, a.Length)
	}
	for i, o := range a.Overlaps {
		if a.Starts[i+1] != a.Starts[i]+a.Tile-o || o < 0 || o >= a.Tile {
			return fmt.Errorf("videovae: tile plan: tiles %d and %d overlap by %d px, inconsistent with starts %d, %d and tile %d", i, i+1, o, a.Starts[i], a.Starts[i+1], a.Tile)
		}
	}
	for i, s := range a.Starts {
		if s%unit != 0 {
			return fmt.Errorf("videovae: tile plan: tile %d starts at %d px, off the %d-px latent grid", i, s, unit)
		}
	}
	if a.Tile%unit != 0 {
		return fmt.Errorf("videovae: tile plan: tile size %d px is off the %d-px latent grid", a.Tile, unit)
	}
	return nil
}

// TilePlan is the spatial tiling of one frame (pixels).
type TilePlan struct {
	Y, X AxisPlan
}

// Tiles is the number of tiles of a frame.
func (p TilePlan) Tiles() int { return p.Y.Count() * p.X.Count() }

// TileArea is the pixel area of one tile.
func (p TilePlan) TileArea() int { return p.Y.Tile * p.X.Tile }

// Work is the pixel area decoded per frame over all tiles: at least the
// canvas area, more by the overlaps.
func (p TilePlan) Work() int { return p.Tiles() * p.TileArea() }

// Overhead is the fraction of decoded area beyond the canvas (0 = none).
func (p TilePlan) Overhead() float64 {
	return float64(p.Work())/float64(p.Y.Length*p.X.Length) - 1
}

// String describes the plan, e.g. "2×3 tiles of 256×256 px".
func (p TilePlan) String() string {
	return fmt.Sprintf("%d×%d tiles of %d×%d px", p.Y.Count(), p.X.Count(), p.Y.Tile, p.X.Tile)
}

// Tiling selects a spatial tile plan.
type Tiling uint8

// Tile plans.
const (
	// TileFixed is the reference plan: square tiles of the configured size
	// (256 px) with at least the configured overlap (64 px). The default.
	TileFixed Tiling = iota
	// TileAdaptive picks, like h3.c, the tile size in [256, 320] px (steps of
	// the spatial ratio) that minimises tiles × tile area, i.e. the decoded
	// area including overlaps. Output differs from the reference where the
	// blend seams move.
	TileAdaptive
	// TileOff decodes every frame in one piece (diffusers disable_tiling).
	TileOff
)

func (t Tiling) String() string {
	switch t {
	case TileFixed:
		return "fixed"
	case TileAdaptive:
		return "adaptive"
	case TileOff:
		return "off"
	}
	return fmt.Sprintf("Tiling(%d)", uint8(t))
}

// Adaptive tile-size bounds of h3.c's configured_tile_pixels.
const (
	adaptiveMin = 256
	adaptiveMax = 320
)

// PlanTiles builds the tile plan of a height×width pixel canvas. size and
// minOverlap apply to TileFixed (the config's 256/64 when 0); TileAdaptive
// chooses the size itself and uses minOverlap.
func PlanTiles(t Tiling, height, width, size, minOverlap, unit int) (TilePlan, error) {
	switch t {
	case TileOff:
		size = max(height, width)
	case TileAdaptive:
		size = AdaptiveTileSize(height, width, minOverlap, unit)
	case TileFixed:
	default:
		return TilePlan{}, fmt.Errorf("videovae: unknown tiling %v", t)
	}
	y, err := PlanAxis(height, size, minOverlap, unit)
	if err != nil {
		return TilePlan{}, fmt.Errorf("%w (height)", err)
	}
	x, err := PlanAxis(width, size, minOverlap, unit)
	if err != nil {
		return TilePlan{}, fmt.Errorf("%w (width)", err)
	}
	return TilePlan{Y: y, X: x}, nil
}

// tileCount is the number of tiles PlanAxis uses for length.
func tileCount(length, tile, minOverlap int) int {
	if length <= tile {
		return 1
	}
	n := (length + tile - 1) / tile
	for tile*n-minOverlap*(n-1) < length {
		n++
	}
	return n
}

// AdaptiveTileSize mirrors h3.c configured_tile_pixels: the size in
// [256, 320] px, stepping by the spatial ratio, minimising
// tiles × size² (ties keep the smaller size).
func AdaptiveTileSize(height, width, minOverlap, unit int) int {
	best, bestScore := adaptiveMin, -1
	for s := adaptiveMin; s <= adaptiveMax; s += unit {
		if s%unit != 0 || minOverlap >= s {
			continue
		}
		score := tileCount(height, s, minOverlap) * tileCount(width, s, minOverlap) * s * s
		if bestScore < 0 || score < bestScore {
			best, bestScore = s, score
		}
	}
	return best
}

// blendWeight is the reference's blend weight of the new tile at position p
// of an overlap of n: torch.arange(n, float32) / n.
func blendWeight(p, n int) float32 { return float32(p) / float32(n) }

// blend returns a·(1 − w) + b·w with each product rounded to float32 before
// the sum, as torch evaluates `a * weight_a + b * weight_b`.
func blend(a, b, w float32) float32 {
	return float32(a*(1-w)) + float32(b*w)
}

// stitcher assembles tiles, given row by row, into out, blending each
// tile's top rows with the unblended tile above and its left columns with
// the unblended tile to its left, then cropping the bottom/right overlaps
// (diffusers AutoencoderKLMiniMaxH3._stitch_tiles). Starts and overlaps are
// in the tiles' own units (pixels for the decoder, latents for the encoder).
type stitcher struct {
	out              *Volume
	ys, xs, yov, xov []int
	tileH, tileW     int
	prevRow, curRow  []*Volume
}

func newStitcher(out *Volume, p TilePlan, scale int) *stitcher {
	s := &stitcher{out: out, tileH: p.Y.Tile / scale, tileW: p.X.Tile / scale}
	div := func(v []int) []int {
		o := make([]int, len(v))
		for i, x := range v {
			o[i] = x / scale
		}
		return o
	}
	s.ys, s.xs, s.yov, s.xov = div(p.Y.Starts), div(p.X.Starts), div(p.Y.Overlaps), div(p.X.Overlaps)
	s.prevRow = make([]*Volume, len(s.xs))
	s.curRow = make([]*Volume, len(s.xs))
	return s
}

// put places tile (i, j); tiles must arrive in row-major order.
func (s *stitcher) put(i, j int, tile *Volume) {
	o := s.out
	if tile.C != o.C || tile.T != o.T || tile.H != s.tileH || tile.W != s.tileW {
		panic(fmt.Sprintf("videovae: stitch: tile %v, want [%d %d %d %d]", tile.Shape(), o.C, o.T, s.tileH, s.tileW))
	}
	var above, left *Volume
	ovY, ovX := 0, 0
	if i > 0 {
		above, ovY = s.prevRow[j], min(s.yov[i-1], s.tileH)
	}
	if j > 0 {
		left, ovX = s.curRow[j-1], min(s.xov[j-1], s.tileW)
	}
	keepH, keepW := s.tileH, s.tileW
	if i < len(s.ys)-1 {
		keepH -= s.yov[i]
	}
	if j < len(s.xs)-1 {
		keepW -= s.xov[j]
	}
	H, W := s.tileH, s.tileW
	for c := 0; c < o.C; c++ {
		for t := 0; t < o.T; t++ {
			for y := 0; y < keepH; y++ {
				src := ((c*o.T+t)*H + y) * W
				dst := o.index(c, t, s.ys[i]+y, s.xs[j])
				row := o.Data[dst : dst+keepW]
				copy(row, tile.Data[src:src+keepW])
				if above != nil && y < ovY {
					w := blendWeight(y, ovY)
					a := above.Data[((c*o.T+t)*H+H-ovY+y)*W:]
					for x := range row {
						row[x] = blend(a[x], row[x], w)
					}
				}
				if left != nil {
					l := left.Data[src+W-ovX:]
					for x := 0; x < ovX && x < keepW; x++ {
						row[x] = blend(l[x], row[x], blendWeight(x, ovX))
					}
				}
			}
		}
	}
	s.curRow[j] = tile
	if j == len(s.xs)-1 {
		s.prevRow, s.curRow = s.curRow, s.prevRow
		clear(s.curRow)
	}
}
