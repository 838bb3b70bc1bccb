package dit

import (
	"fmt"
	"math"
)

// TimestepFeatures is diffusers Timesteps(freq_dim, flip_sin_to_cos=True,
// downscale_freq_shift=0) on unscaled timesteps t ∈ [0, 1]: for each t the
// row [cos(t·f_0..f_{h−1}) | sin(t·f_0..f_{h−1})] with h = dim/2 and
// f_i = exp(f32(−ln 10000·i)/h), every operation in float32 as torch does
// (H3-DIT §8.2). The result is [len(ts)·dim].
func TimestepFeatures(ts []float32, dim int) []float32 {
	half := dim / 2
	freq := make([]float32, half)
	negLog := float32(-math.Log(10000))
	for i := range freq {
		e := negLog * float32(i) / float32(half)
		freq[i] = float32(math.Exp(float64(e)))
	}
	out := make([]float32, len(ts)*dim)
	for r, t := range ts {
		row := out[r*dim : (r+1)*dim]
		for i, f := range freq {
			arg := t * f
			row[i] = float32(math.Cos(float64(arg)))
			row[half+i] = float32(math.Sin(float64(arg)))
		}
	}
	return out
}

// InvFreq is the rotary frequency buffer 1/θ^(2i/(2F)), i < F, in float32
// as MiniMaxH3RotaryPosEmbed builds it (bitwise equal to the original
// checkpoint's rope.inv_freq for the released θ and F).
func InvFreq(theta float64, freqDim int) []float32 {
	out := make([]float32, freqDim)
	base := float64(float32(theta))
	for i := range out {
		e := float32(2*i) / float32(2*freqDim)
		out[i] = 1 / float32(math.Pow(base, float64(e)))
	}
	return out
}

// RotaryTables computes the rotary cos and sin of every row from its
// float64 (t, h, w) coordinates (positions [rows·3]): the coordinates are
// cast to float32, angle[a·F+i] = coord_a·invFreq[i] in float32, and the 3·F
// angles of a row are returned once (the model's table repeats them to 6·F
// channels; the RoPE kernel pairs channel d with d+3F). Shapes: [rows·3F].
func RotaryTables(positions []float64, invFreq []float32) (cos, sin []float32, err error) {
	if len(positions)%3 != 0 {
		return nil, nil, fmt.Errorf("dit: %d position values is not a multiple of 3", len(positions))
	}
	rows, F := len(positions)/3, len(invFreq)
	cos = make([]float32, rows*3*F)
	sin = make([]float32, rows*3*F)
	for r := 0; r < rows; r++ {
		for a := 0; a < 3; a++ {
			p := float32(positions[3*r+a])
			for i, f := range invFreq {
				ang := p * f
				cos[(r*3+a)*F+i] = float32(math.Cos(float64(ang)))
				sin[(r*3+a)*F+i] = float32(math.Sin(float64(ang)))
			}
		}
	}
	return cos, sin, nil
}
