package videovae

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/compute/cpu"
	"h3studio/engine/testkit"
)

func randomVolume(c, t, h, w int, seed uint64) *Volume {
	rng := rand.New(rand.NewPCG(seed, 9))
	v := NewVolume(c, t, h, w)
	for i := range v.Data {
		v.Data[i] = float32(rng.NormFloat64())
	}
	return v
}

// Small tiles keep these tests fast: 64-px tiles with 32-px overlaps give a
// 3×3 plan on a 128×128 canvas.
var smallTiles = &DecodeOptions{TileSize: 64, TileOverlap: 32}

// TestDecodeProgressAndCancel counts tiles: every tile reports once, in
// order, and a cancel during tile k stops the decode before tile k+1.
func TestDecodeProgressAndCancel(t *testing.T) {
	m := tinyModel(t, cpu.New(cpu.Options{}))
	z := randomVolume(24, 12, 8, 8, 3) // 2 windows × 9 tiles
	var events []Progress
	o := *smallTiles
	o.Progress = func(p Progress) { events = append(events, p) }
	frames := 0
	plan, err := m.DecodeStream(context.Background(), z, &o, func(f Frame) error {
		if f.Index != frames {
			t.Errorf("frame %d delivered as %d", frames, f.Index)
		}
		frames++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Frames != 39 || frames != 39 || len(events) != 18 {
		t.Fatalf("%d frames delivered of %d planned, %d progress events; want 39, 39, 18", frames, plan.Frames, len(events))
	}
	for i, e := range events {
		if e.Done != i+1 || e.Total != 18 || e.Tiles != 9 || e.Windows != 2 || e.Window != i/9+1 || e.Tile != i%9+1 {
			t.Errorf("event %d: %+v", i, e)
		}
	}
	if events[9].Frames != 17 || events[17].Frames != 17 {
		t.Errorf("frames reported after windows: %d, %d; want 17 after the first window", events[9].Frames, events[17].Frames)
	}

	for _, stopAt := range []int{1, 10} {
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		o.Progress = func(p Progress) {
			n++
			if p.Done == stopAt {
				cancel()
			}
		}
		_, err := m.Decode(ctx, z, &o)
		cancel()
		if !errors.Is(err, context.Canceled) || n != stopAt {
			t.Errorf("cancel at tile %d: %d tiles decoded, error %v", stopAt, n, err)
		}
	}
}

// The frames a stream delivers are the frames Decode returns.
func TestDecodeStreamMatchesDecode(t *testing.T) {
	m := tinyModel(t, cpu.New(cpu.Options{}))
	z := randomVolume(24, 8, 4, 4, 4)
	v, err := m.Decode(context.Background(), z, smallTiles)
	if err != nil {
		t.Fatal(err)
	}
	if v.T != 26 {
		t.Fatalf("T=8 decoded to %d frames, want 26 (ERRATA §3.1)", v.T)
	}
	_, err = m.DecodeStream(context.Background(), z, smallTiles, func(f Frame) error {
		want := v.Frame(f.Index)
		for i := range want {
			if f.Data[i] != want[i] {
				t.Fatalf("frame %d differs at %d", f.Index, i)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	img := ToRGBA(Frame{Index: 0, C: 3, H: v.H, W: v.W, Data: v.Frame(0)})
	if img.Bounds().Dx() != 64 || img.Pix[3] != 255 {
		t.Fatalf("RGBA frame %v alpha %d", img.Bounds(), img.Pix[3])
	}
}

func TestDecodeRejectsBadInput(t *testing.T) {
	m := tinyModel(t, cpu.New(cpu.Options{}))
	nan := randomVolume(24, 7, 2, 2, 1)
	nan.Data[24*7*4-5] = float32(math.NaN())
	inf := randomVolume(24, 7, 2, 2, 1)
	inf.Data[3] = float32(math.Inf(1))
	for _, c := range []struct {
		name string
		z    *Volume
		o    *DecodeOptions
		rule string
	}{
		{"16 channels", randomVolume(16, 7, 2, 2, 1), nil, "latents have 16 channels; the video VAE takes 24 (latent_channels)"},
		{"2 latent frames", randomVolume(24, 2, 2, 2, 1), nil, "needs at least 3"},
		{"empty grid", NewVolume(24, 7, 0, 2), nil, "need at least one frame, row and column"},
		{"short data", &Volume{C: 24, T: 7, H: 2, W: 2, Data: make([]float32, 10)}, nil, "with 10 values"},
		{"NaN", nan, nil, "latents: non-finite value NaN at channel 23, frame 5, row 1, column 1"},
		{"Inf", inf, nil, "non-finite value +Inf at channel 0, frame 0, row 1, column 1"},
		{"tile off the grid", randomVolume(24, 7, 20, 20, 1), &DecodeOptions{TileSize: 250}, "tile size 250 px is not a positive multiple of the 16-px latent grid"},
		{"overlap off the grid", randomVolume(24, 7, 20, 20, 1), &DecodeOptions{TileOverlap: 40}, "minimum overlap 40 px must be a multiple of 16 px"},
		{"overlap as wide as the tile", randomVolume(24, 7, 20, 20, 1), &DecodeOptions{TileSize: 128, TileOverlap: 128}, "smaller than the 128-px tile, or tiles cannot cover the canvas"},
	} {
		_, err := m.Decode(context.Background(), c.z, c.o)
		if err == nil || !strings.Contains(err.Error(), c.rule) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.rule)
		}
	}
}

// TestDecodeRefusesNonFiniteOutput: finite latents through a decoder with a
// NaN weight give an error naming the frame, not frames of garbage pixels.
func TestDecodeRefusesNonFiniteOutput(t *testing.T) {
	dir := t.TempDir()
	if err := WriteTestModel(dir, TinyConfig(), 1); err != nil {
		t.Fatal(err)
	}
	testkit.PoisonTensor(t, filepath.Join(dir, "source", "model.safetensors"), "decoder.proj_out.bias")
	m, err := Open(cpu.New(cpu.Options{}), dir, dir+"/source", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	frames := 0
	_, err = m.DecodeStream(context.Background(), randomVolume(24, 7, 2, 2, 1), nil, func(Frame) error { frames++; return nil })
	if err == nil || !strings.Contains(err.Error(), "the decoder produced a non-finite value NaN in frame 0") {
		t.Errorf("err = %v, want the non-finite frame 0 named", err)
	}
	if frames != 0 {
		t.Errorf("%d frames delivered before the error", frames)
	}
}
