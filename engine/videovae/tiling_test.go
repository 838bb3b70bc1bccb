package videovae

import (
	"context"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"h3studio/engine/compute/cpu"
	"h3studio/engine/testkit"
)

// The reference's 256/64 plans of H3-ENCODERS-VAES.md §8.7.
func TestPlanAxisReferenceTable(t *testing.T) {
	for _, c := range []struct {
		length           int
		starts, overlaps []int
	}{
		{128, []int{0}, nil},
		{256, []int{0}, nil},
		{384, []int{0, 128}, []int{128}},
		{480, []int{0, 112, 224}, []int{144, 144}},
		{512, []int{0, 128, 256}, []int{128, 128}},
		{640, []int{0, 192, 384}, []int{64, 64}},
		{768, []int{0, 160, 336, 512}, []int{96, 80, 80}},
		{832, []int{0, 192, 384, 576}, []int{64, 64, 64}},
		{864, []int{0, 144, 288, 448, 608}, []int{112, 112, 96, 96}},
		{1344, []int{0, 176, 352, 528, 704, 896, 1088}, []int{80, 80, 80, 80, 64, 64}},
	} {
		p, err := PlanAxis(c.length, 256, 64, 16)
		if err != nil {
			t.Fatalf("%d: %v", c.length, err)
		}
		tile := 256
		if c.length < 256 {
			tile = c.length
		}
		if !reflect.DeepEqual(p.Starts, c.starts) || !reflect.DeepEqual(p.Overlaps, c.overlaps) || p.Tile != tile {
			t.Errorf("%d: starts %v overlaps %v tile %d, want %v %v %d", c.length, p.Starts, p.Overlaps, p.Tile, c.starts, c.overlaps, tile)
		}
	}
}

func TestPlanAxisRejectsPlansThatCannotCover(t *testing.T) {
	for _, c := range []struct {
		length, tile, overlap, unit int
		rule                        string
	}{
		{520, 256, 64, 16, "multiple of the 16-px latent grid"},
		{512, 250, 64, 16, "tile size 250"},
		{512, 256, 60, 16, "minimum overlap 60"},
		{512, 256, 256, 16, "smaller than the 256-px tile"},
		{0, 256, 64, 16, "canvas extent 0"},
	} {
		_, err := PlanAxis(c.length, c.tile, c.overlap, c.unit)
		if err == nil || !strings.Contains(err.Error(), c.rule) {
			t.Errorf("PlanAxis(%d, %d, %d, %d) = %v, want an error naming %q", c.length, c.tile, c.overlap, c.unit, err, c.rule)
		}
	}
	bad := AxisPlan{Length: 512, Tile: 256, Starts: []int{0, 192}, Overlaps: []int{64}}
	if err := bad.Validate(16); err == nil || !strings.Contains(err.Error(), "cannot cover the canvas") {
		t.Errorf("a plan ending at 448 of 512 px validated: %v", err)
	}
}

// h3.c's adaptive choice (its tests: 768×768 → 304; its notes: 544×960 →
// 304 with 2×4 tiles, 288×512 → 288 with 1×2).
func TestAdaptiveTileSize(t *testing.T) {
	for _, c := range []struct{ h, w, size, tiles int }{
		{768, 768, 304, 9},
		{544, 960, 304, 8},
		{288, 512, 288, 2},
		{256, 256, 256, 1},
		{512, 512, 288, 4},
		{768, 1344, 320, 15},
	} {
		p, err := PlanTiles(TileAdaptive, c.h, c.w, 0, 64, 16)
		if err != nil {
			t.Fatal(err)
		}
		if p.Y.Tile != min(c.size, c.h) && p.Y.Count() > 1 || AdaptiveTileSize(c.h, c.w, 64, 16) != c.size || p.Tiles() != c.tiles {
			t.Errorf("%d×%d: size %d, %s; want size %d with %d tiles", c.h, c.w, AdaptiveTileSize(c.h, c.w, 64, 16), p, c.size, c.tiles)
		}
	}
}

// referenceStitch transcribes diffusers _blend/_stitch_tiles literally
// (copying tiles, blending, cropping, concatenating).
func referenceStitch(tiles [][]*Volume, yov, xov []int) *Volume {
	blendY := func(a, b *Volume, ext int) *Volume {
		ext = min(a.H, b.H, ext)
		o := b.Box(0, b.T, 0, b.H, 0, b.W)
		for c := 0; c < b.C; c++ {
			for t := 0; t < b.T; t++ {
				for p := 0; p < ext; p++ {
					w := float32(p) / float32(ext)
					for x := 0; x < b.W; x++ {
						av := a.Data[a.index(c, t, a.H-ext+p, x)]
						bv := b.Data[b.index(c, t, p, x)]
						o.Data[o.index(c, t, p, x)] = float32(av*(1-w)) + float32(bv*w)
					}
				}
			}
		}
		return o
	}
	blendX := func(a, b *Volume, ext int) *Volume {
		ext = min(a.W, b.W, ext)
		o := b.Box(0, b.T, 0, b.H, 0, b.W)
		for c := 0; c < b.C; c++ {
			for t := 0; t < b.T; t++ {
				for y := 0; y < b.H; y++ {
					for p := 0; p < ext; p++ {
						w := float32(p) / float32(ext)
						av := a.Data[a.index(c, t, y, a.W-ext+p)]
						bv := b.Data[b.index(c, t, y, p)]
						o.Data[o.index(c, t, y, p)] = float32(av*(1-w)) + float32(bv*w)
					}
				}
			}
		}
		return o
	}
	var rows [][]*Volume
	for i, row := range tiles {
		var out []*Volume
		for j, tile := range row {
			if i > 0 {
				tile = blendY(tiles[i-1][j], tile, yov[i-1])
			}
			if j > 0 {
				tile = blendX(row[j-1], tile, xov[j-1])
			}
			h, w := tile.H, tile.W
			if i < len(tiles)-1 {
				h -= yov[i]
			}
			if j < len(row)-1 {
				w -= xov[j]
			}
			out = append(out, tile.Box(0, tile.T, 0, h, 0, w))
		}
		rows = append(rows, out)
	}
	// concatenate along W then H
	H, W := 0, 0
	for _, r := range rows {
		H += r[0].H
	}
	for _, t := range rows[0] {
		W += t.W
	}
	o := NewVolume(tiles[0][0].C, tiles[0][0].T, H, W)
	y0 := 0
	for _, r := range rows {
		x0 := 0
		for _, t := range r {
			for c := 0; c < t.C; c++ {
				for f := 0; f < t.T; f++ {
					for y := 0; y < t.H; y++ {
						copy(o.Data[o.index(c, f, y0+y, x0):][:t.W], t.Data[t.index(c, f, y, 0):][:t.W])
					}
				}
			}
			x0 += t.W
		}
		y0 += r[0].H
	}
	return o
}

func TestStitcherMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct{ h, w, tile, ov, unit, scale int }{
		{24, 32, 16, 8, 4, 1},        // the decode_tiled fixture's 2×3 plan
		{768, 1344, 256, 64, 16, 16}, // released 1344×768 in latent units (encoder moments)
		{480, 864, 256, 64, 16, 4},
		{64, 48, 64, 16, 16, 1}, // one row
	} {
		p, err := PlanTiles(TileFixed, c.h, c.w, c.tile, c.ov, c.unit)
		if err != nil {
			t.Fatal(err)
		}
		th, tw := p.Y.Tile/c.scale, p.X.Tile/c.scale
		tiles := make([][]*Volume, p.Y.Count())
		for i := range tiles {
			for range p.X.Starts {
				v := NewVolume(2, 3, th, tw)
				for k := range v.Data {
					v.Data[k] = float32(rng.NormFloat64())
				}
				tiles[i] = append(tiles[i], v)
			}
		}
		div := func(s []int) []int {
			o := make([]int, len(s))
			for i, x := range s {
				o[i] = x / c.scale
			}
			return o
		}
		want := referenceStitch(tiles, div(p.Y.Overlaps), div(p.X.Overlaps))
		got := NewVolume(2, 3, c.h/c.scale, c.w/c.scale)
		st := newStitcher(got, p, c.scale)
		for i := range tiles {
			for j := range tiles[i] {
				st.put(i, j, tiles[i][j])
			}
		}
		if !reflect.DeepEqual(got.Shape(), want.Shape()) {
			t.Fatalf("%v: stitched %v, reference %v", c, got.Shape(), want.Shape())
		}
		for k := range want.Data {
			if got.Data[k] != want.Data[k] {
				t.Fatalf("%v (%s): element %d = %v, reference %v", c, p, k, got.Data[k], want.Data[k])
			}
		}
	}
}

// BenchmarkDecodeTiny256 decodes the demo geometry (256×256, 22 frames =
// 7 latents) with TinyConfig's random model on the CPU backend. Target:
// a few seconds on 2 cores (the end-to-end demo).
func BenchmarkDecodeTiny256(b *testing.B) {
	be := cpu.New(cpu.Options{})
	m := tinyModel(b, be)
	rng := rand.New(rand.NewPCG(1, 2))
	z := NewVolume(24, 7, 16, 16)
	for i := range z.Data {
		z.Data[i] = float32(rng.NormFloat64())
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := m.Decode(context.Background(), z, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTilePlans decodes 512×512×22 with the reference fixed plan and
// h3.c's adaptive plan (TinyConfig's random model) and reports the passes,
// tokens per pass and the rel-L2 between the two outputs.
func BenchmarkTilePlans(b *testing.B) {
	be := cpu.New(cpu.Options{})
	m := tinyModel(b, be)
	z := randomVolume(24, 7, 32, 32, 7)
	outs := map[Tiling]*Volume{}
	for _, tl := range []Tiling{TileFixed, TileAdaptive} {
		b.Run(tl.String(), func(b *testing.B) {
			o := &DecodeOptions{Tiling: tl}
			est, err := EstimateDecode(m.Config, z.T, z.H, z.W, o, 0)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < b.N; i++ {
				v, err := m.Decode(context.Background(), z, o)
				if err != nil {
					b.Fatal(err)
				}
				outs[tl] = v
			}
			b.ReportMetric(float64(est.TilePasses), "passes")
			b.ReportMetric(float64(est.TileTokens), "tokens/pass")
			b.ReportMetric(est.FLOPs/1e9, "GFLOP")
			b.ReportMetric(est.Plan.Overhead()*100, "%overlap")
		})
	}
	if a, f := outs[TileAdaptive], outs[TileFixed]; a != nil && f != nil {
		b.Logf("512×512×22: rel-L2(adaptive, fixed) = %.3g", testkit.RelL2(a.Data, f.Data))
	}
}
