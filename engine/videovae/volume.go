package videovae

import (
	"fmt"
	"math"
)

// Volume is a host float32 array of shape [C, T, H, W], channel-major, as
// torch's [1, C, T, H, W] video tensors without the batch axis. Latents,
// posterior moments and ImageNet-normalized pixels are Volumes.
type Volume struct {
	C, T, H, W int
	Data       []float32
}

// NewVolume allocates a zeroed volume.
func NewVolume(c, t, h, w int) *Volume {
	return &Volume{C: c, T: t, H: h, W: w, Data: make([]float32, c*t*h*w)}
}

// WrapVolume checks that data holds c·t·h·w values and wraps it.
func WrapVolume(c, t, h, w int, data []float32) (*Volume, error) {
	if c < 0 || t < 0 || h < 0 || w < 0 || len(data) != c*t*h*w {
		return nil, fmt.Errorf("videovae: %d values for a [%d %d %d %d] volume", len(data), c, t, h, w)
	}
	return &Volume{C: c, T: t, H: h, W: w, Data: data}, nil
}

// Shape is [C, T, H, W].
func (v *Volume) Shape() []int { return []int{v.C, v.T, v.H, v.W} }

// index is the offset of (c, t, y, x).
func (v *Volume) index(c, t, y, x int) int { return ((c*v.T+t)*v.H+y)*v.W + x }

// Box copies the sub-volume of frames [t0, t1), rows [y0, y1), columns
// [x0, x1) (all channels).
func (v *Volume) Box(t0, t1, y0, y1, x0, x1 int) *Volume {
	if t0 < 0 || t1 > v.T || t0 > t1 || y0 < 0 || y1 > v.H || y0 > y1 || x0 < 0 || x1 > v.W || x0 > x1 {
		panic(fmt.Sprintf("videovae: box t[%d,%d) y[%d,%d) x[%d,%d) outside %v", t0, t1, y0, y1, x0, x1, v.Shape()))
	}
	o := NewVolume(v.C, t1-t0, y1-y0, x1-x0)
	for c := 0; c < v.C; c++ {
		for t := t0; t < t1; t++ {
			for y := y0; y < y1; y++ {
				src := v.index(c, t, y, x0)
				dst := o.index(c, t-t0, y-y0, 0)
				copy(o.Data[dst:dst+o.W], v.Data[src:src+o.W])
			}
		}
	}
	return o
}

// Frames copies frames [t0, t1).
func (v *Volume) Frames(t0, t1 int) *Volume { return v.Box(t0, t1, 0, v.H, 0, v.W) }

// Frame copies the channels of frame t as a [C, H, W] slice.
func (v *Volume) Frame(t int) []float32 {
	out := make([]float32, v.C*v.H*v.W)
	hw := v.H * v.W
	for c := 0; c < v.C; c++ {
		copy(out[c*hw:(c+1)*hw], v.Data[v.index(c, t, 0, 0):v.index(c, t, 0, 0)+hw])
	}
	return out
}

// ConcatFrames joins volumes of equal C, H, W along time.
func ConcatFrames(vs ...*Volume) *Volume {
	if len(vs) == 0 {
		return &Volume{}
	}
	T := 0
	for _, v := range vs {
		if v.C != vs[0].C || v.H != vs[0].H || v.W != vs[0].W {
			panic(fmt.Sprintf("videovae: concat %v with %v", vs[0].Shape(), v.Shape()))
		}
		T += v.T
	}
	o := NewVolume(vs[0].C, T, vs[0].H, vs[0].W)
	hw := o.H * o.W
	for c := 0; c < o.C; c++ {
		t0 := 0
		for _, v := range vs {
			n := v.T * hw
			copy(o.Data[o.index(c, t0, 0, 0):o.index(c, t0, 0, 0)+n], v.Data[c*n:(c+1)*n])
			t0 += v.T
		}
	}
	return o
}

// CheckFinite returns an error naming the first NaN or infinite element.
func (v *Volume) CheckFinite(what string) error {
	for i, x := range v.Data {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			hw := v.H * v.W
			c, r := i/(v.T*hw), i%(v.T*hw)
			return fmt.Errorf("videovae: %s: non-finite value %v at channel %d, frame %d, row %d, column %d (every value must be finite)",
				what, x, c, r/hw, (r%hw)/v.W, r%v.W)
		}
	}
	return nil
}
