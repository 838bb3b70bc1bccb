package layout

import "fmt"

// VideoShape is a latent video [C, T, H, W] (channel-major, as the VAE and
// the noise draw produce it).
type VideoShape struct{ C, T, H, W int }

func (v VideoShape) String() string { return fmt.Sprintf("[%d,%d,%d,%d]", v.C, v.T, v.H, v.W) }

// Len is the number of values.
func (v VideoShape) Len() int { return v.C * v.T * v.H * v.W }

// PatchRows is the number of packed rows of a latent video.
func (v VideoShape) PatchRows(p Patch) int {
	p = p.orDefault()
	return v.T * (v.H / p.H) * (v.W / p.W)
}

// PatchWidth is the width of a packed row: C·ph·pw (96 for the released
// model).
func (v VideoShape) PatchWidth(p Patch) int {
	p = p.orDefault()
	return v.C * p.H * p.W
}

func (v VideoShape) check(p Patch, n int, what string) error {
	if err := p.validate(); err != nil {
		return err
	}
	if v.C < 1 || v.T < 1 || v.H < p.H || v.W < p.W || v.H%p.H != 0 || v.W%p.W != 0 {
		return fmt.Errorf("layout: latent video %v is not divisible by the %d×%d×%d patch", v, p.T, p.H, p.W)
	}
	if n != v.Len() {
		return fmt.Errorf("layout: %s holds %d values, latent video %v needs %d", what, n, v, v.Len())
	}
	return nil
}

// Patchify packs a latent video [C, T, H, W] into rows (the reference's
// patchify_video_latents): rows ordered frame-major then row-major over
// patches, r = (t·(H/ph) + py)·(W/pw) + px, and within a row the features
// f = (c·ph + dy)·pw + dx holding z[c][t][ph·py+dy][pw·px+dx]. dst must hold
// v.Len() values; it is returned. A nil dst is allocated.
func Patchify(dst, src []float32, v VideoShape, p Patch) ([]float32, error) {
	p = p.orDefault()
	if err := v.check(p, len(src), "source"); err != nil {
		return nil, err
	}
	if dst == nil {
		dst = make([]float32, len(src))
	} else if len(dst) != len(src) {
		return nil, fmt.Errorf("layout: patchify destination holds %d values, want %d", len(dst), len(src))
	}
	forEachPatch(v, p, func(row, f, idx int, width int) { dst[row*width+f] = src[idx] })
	return dst, nil
}

// Unpatchify is the exact inverse of Patchify: rows back to [C, T, H, W].
func Unpatchify(dst, rows []float32, v VideoShape, p Patch) ([]float32, error) {
	p = p.orDefault()
	if err := v.check(p, len(rows), "rows"); err != nil {
		return nil, err
	}
	if dst == nil {
		dst = make([]float32, len(rows))
	} else if len(dst) != len(rows) {
		return nil, fmt.Errorf("layout: unpatchify destination holds %d values, want %d", len(dst), len(rows))
	}
	forEachPatch(v, p, func(row, f, idx int, width int) { dst[idx] = rows[row*width+f] })
	return dst, nil
}

func forEachPatch(v VideoShape, p Patch, fn func(row, f, idx, width int)) {
	nh, nw := v.H/p.H, v.W/p.W
	width := v.C * p.H * p.W
	for t := 0; t < v.T; t++ {
		for py := 0; py < nh; py++ {
			for px := 0; px < nw; px++ {
				row := (t*nh+py)*nw + px
				for c := 0; c < v.C; c++ {
					for dy := 0; dy < p.H; dy++ {
						base := ((c*v.T+t)*v.H+py*p.H+dy)*v.W + px*p.W
						for dx := 0; dx < p.W; dx++ {
							fn(row, (c*p.H+dy)*p.W+dx, base+dx, width)
						}
					}
				}
			}
		}
	}
}

// PackAudio packs audio latents [2, C, A] (stereo channel, latent channel,
// time) into channel-major rows [2A, C]: row s·A + k holds a[s][0..C)[k].
// dst is allocated when nil.
func PackAudio(dst, src []float32, channels, a int) ([]float32, error) {
	if channels < 1 || a < 0 || len(src) != AudioChannels*channels*a {
		return nil, fmt.Errorf("layout: audio latents hold %d values, [%d,%d,%d] needs %d", len(src), AudioChannels, channels, a, AudioChannels*channels*a)
	}
	return permuteAudio(dst, src, channels, a, true)
}

// UnpackAudio is the inverse of PackAudio: rows [2A, C] back to [2, C, A].
func UnpackAudio(dst, rows []float32, channels, a int) ([]float32, error) {
	if channels < 1 || a < 0 || len(rows) != AudioChannels*channels*a {
		return nil, fmt.Errorf("layout: audio rows hold %d values, [%d,%d] needs %d", len(rows), AudioChannels*a, channels, AudioChannels*channels*a)
	}
	return permuteAudio(dst, rows, channels, a, false)
}

// permuteAudio copies src into dst (allocated when nil) between the
// latent order [2, C, A] and the row order [2A, C]: latents to rows when
// pack, rows to latents otherwise.
func permuteAudio(dst, src []float32, channels, a int, pack bool) ([]float32, error) {
	if dst == nil {
		dst = make([]float32, len(src))
	} else if len(dst) != len(src) {
		what := "audio latents"
		if pack {
			what = "audio rows"
		}
		return nil, fmt.Errorf("layout: %s destination holds %d values, want %d", what, len(dst), len(src))
	}
	for s := 0; s < AudioChannels; s++ {
		for c := 0; c < channels; c++ {
			for k := 0; k < a; k++ {
				latent, row := (s*channels+c)*a+k, (s*a+k)*channels+c
				if pack {
					dst[row] = src[latent]
				} else {
					dst[latent] = src[row]
				}
			}
		}
	}
	return dst, nil
}
