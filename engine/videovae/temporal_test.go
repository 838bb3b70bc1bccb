package videovae

import (
	"strings"
	"testing"
)

func TestTemporalGeometry(t *testing.T) {
	g := NewTemporal(4, 17, 3)
	want := Temporal{Ratio: 4, ClipLength: 17, TokenDrop: 3, TokensChunk: 5, FramePrePadding: 3, TokenOverlap: 2, FrameOverlap: 5}
	if g != want {
		t.Fatalf("geometry %+v, want %+v", g, want)
	}
	// Length arithmetic of spec §11 (F = 17n+5 ↔ T = 5n+2) and ERRATA §3.1.
	for _, c := range []struct{ T, frames, windows, pad int }{
		{7, 22, 1, 0}, {12, 39, 2, 0}, {17, 56, 3, 0}, {32, 107, 6, 0}, {72, 243, 14, 0}, {107, 362, 21, 0},
		{3, 9, 1, 4}, {4, 13, 1, 3}, {5, 17, 1, 2}, {6, 18, 1, 1}, {8, 26, 2, 4},
	} {
		p, err := g.PlanDecode(c.T)
		if err != nil {
			t.Fatalf("T=%d: %v", c.T, err)
		}
		if p.Frames != c.frames || p.Windows != c.windows || p.PadTokens != c.pad || p.WindowLatents != 7 {
			t.Errorf("T=%d: %+v, want %d frames, %d windows, %d padded latents", c.T, p, c.frames, c.windows, c.pad)
		}
	}
	for _, T := range []int{0, 1, 2} {
		if _, err := g.PlanDecode(T); err == nil || !strings.Contains(err.Error(), "at least 3") {
			t.Errorf("T=%d decoded: %v", T, err)
		}
	}
	for F, T := range map[int]int{1: 1, 22: 7, 39: 12, 56: 17, 107: 32, 243: 72, 362: 107, 18: 7, 13: 2} {
		if got := g.EncodeLatents(F); got != T {
			t.Errorf("EncodeLatents(%d) = %d, want %d", F, got, T)
		}
	}
}

// TestDecodeWindowsStayInside: for every clip geometry Validate accepts
// (token_drop at most one clip's latents), every window PlanDecode plans
// reads latents inside the padded input (a window past the end would panic
// in Volume.Frames).
func TestDecodeWindowsStayInside(t *testing.T) {
	for ratio := 1; ratio <= 8; ratio++ {
		for clip := 1; clip <= 40; clip++ {
			chunk := (clip + ratio - 1) / ratio
			for drop := 0; drop <= chunk; drop++ {
				g := NewTemporal(ratio, clip, drop)
				for T := 1; T <= 40; T++ {
					p, err := g.PlanDecode(T)
					if err != nil {
						continue
					}
					if last := (p.Windows-1)*g.TokensChunk + p.WindowLatents; last > T+p.PadTokens {
						t.Fatalf("ratio %d clip %d drop %d T %d: window reads latents up to %d of %d", ratio, clip, drop, T, last, T+p.PadTokens)
					}
				}
			}
		}
	}
}

// TestMinLatents: the smallest decodable latent count PlanDecode's error
// quotes is exactly the first T it accepts, for every geometry — long clips
// included (a search capped at 1,000 latents quoted "at least 0" for a
// 65,536-frame clip).
func TestMinLatents(t *testing.T) {
	for _, ratio := range []int{1, 2, 4, 8} {
		for _, clip := range []int{1, 5, 17, 33, 4097, 65536} {
			for _, drop := range []int{0, 1, 3, 7} {
				g := NewTemporal(ratio, clip, drop)
				if drop >= g.TokensChunk {
					continue
				}
				first := 0
				for T := 1; T < 3*g.TokensChunk+8; T++ {
					if _, err := g.PlanDecode(T); err == nil {
						first = T
						break
					}
				}
				if got := g.minLatents(); got != first || got < 1 {
					t.Errorf("ratio %d clip %d drop %d: minLatents %d, first decodable %d", ratio, clip, drop, got, first)
				}
			}
		}
	}
}
