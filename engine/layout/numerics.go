package layout

import "math"

// This file reproduces, operation for operation, the float64 arithmetic of
// the numpy, torch and CPython routines the reference layout builder calls, so
// that position ids come out bit-identical. Every product that is followed by
// an addition is wrapped in float64(...): the Go specification lets a
// compiler fuse x*y+z into one FMA (and gc does so on arm64) unless an
// explicit conversion rounds the product first.

// Rotary-time constants of the reference (before_denoise.py):
// one latent frame spans 5/3 · (1, 4, 4, 4, 4)[k mod 5] rotary units.
const ropeFrameRescale = 5.0 / 3.0

var ropeFramesPerLatent = [5]float64{1, 4, 4, 4, 4}

// ropeSpatialScale scales the unit spatial grid: a square frame spans [0, 32).
const ropeSpatialScale = 32.0

// latentSpan is the rotary time latent frame k occupies: 5/3 · p[k mod 5].
func latentSpan(k int) float64 {
	return float64(ropeFrameRescale * ropeFramesPerLatent[k%len(ropeFramesPerLatent)])
}

// linspaceOpen is numpy.linspace(start, stop, n, endpoint=False):
// step = (stop − start)/n, value_i = i·step + start (the product rounded
// first, no fused multiply-add).
func linspaceOpen(start, stop float64, n int) []float64 {
	out := make([]float64, n)
	if n == 0 {
		return out
	}
	step := (stop - start) / float64(n)
	if step == 0 { // numpy's special case for denormal steps (gh-5437)
		delta := stop - start
		for i := range out {
			out[i] = float64(float64(i)/float64(n)*delta) + start
		}
		return out
	}
	for i := range out {
		out[i] = float64(float64(i)*step) + start
	}
	return out
}

// numpySum is numpy.sum of a contiguous float64 vector: the add ufunc's
// identity 0.0 plus numpy's pairwise summation (pairwise_sum in
// loops_utils.h: blocks of at most 128 summed with 8 accumulators, longer
// runs split in two at a multiple of 8).
func numpySum(a []float64) float64 {
	return 0.0 + pairwiseSum(a)
}

func pairwiseSum(a []float64) float64 {
	n := len(a)
	switch {
	case n < 8:
		res := math.Copysign(0, -1) // numpy starts at -0.0 to keep the sign of an all -0.0 sum
		for _, v := range a {
			res += v
		}
		return res
	case n <= 128:
		var r [8]float64
		copy(r[:], a[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			for j := range r {
				r[j] += a[i+j]
			}
		}
		res := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			res += a[i]
		}
		return res
	default:
		n2 := n / 2
		n2 -= n2 % 8
		return pairwiseSum(a[:n2]) + pairwiseSum(a[n2:])
	}
}

// pythonSum is CPython 3.12's builtin sum() over floats with the default
// integer start 0: the first float replaces the start exactly, and the rest
// are added with Neumaier's compensated summation (gh-100425), the
// compensation folded in at the end when it is non-zero and finite.
func pythonSum(a []float64) float64 {
	if len(a) == 0 {
		return 0
	}
	f, c := a[0], 0.0
	for _, x := range a[1:] {
		t := f + x
		if math.Abs(f) >= math.Abs(x) {
			c += (f - t) + x
		} else {
			c += (x - t) + f
		}
		f = t
	}
	if c != 0 && !math.IsInf(c, 0) && !math.IsNaN(c) {
		f += c
	}
	return f
}

// latentSpans returns the rotary spans of n latent frames.
func latentSpans(n int) []float64 {
	s := make([]float64, n)
	for k := range s {
		s[k] = latentSpan(k)
	}
	return s
}

// temporalGrid is the reference's _temporal_position_grid: the rotary time of
// each of n latent frames starting at origin, origin + cumsum(spans)[k−1]
// where the cumulative sum (torch.cumsum, float64) is sequential and the
// origin is added last.
func temporalGrid(n int, origin float64) []float64 {
	out := make([]float64, n)
	cum := 0.0
	for k := range out {
		out[k] = origin + cum
		cum += latentSpan(k)
	}
	return out
}

// lastAnchorSpan is the rotary span of n latent frames as the fl2va "last"
// keyframe anchor sums it: numpy's pairwise sum.
func lastAnchorSpan(n int) float64 { return numpySum(latentSpans(n)) }

// referenceVideoSpan is the clock advance of an n-latent reference video as
// the ref2va builder sums it: Python's builtin sum().
func referenceVideoSpan(n int) float64 { return pythonSum(latentSpans(n)) }

// axisGrid is the reference's _spatial_position_grid: dim/patch coordinates
// of one aspect-normalised spatial axis, linspace(left, left+ratio,
// dim/patch, endpoint=False)·32 with ratio = dim/√area, left = (1−ratio)/2.
func axisGrid(dim, patch int, sqrtArea float64) []float64 {
	ratio := float64(dim) / sqrtArea
	left := (1.0 - ratio) / 2.0
	g := linspaceOpen(left, left+ratio, dim/patch)
	for i := range g {
		g[i] *= ropeSpatialScale
	}
	return g
}

// frameGrid is the reference's _frame_position_grid: the (h, w) coordinates
// of one latent frame's rows in row-major patch order, and the width axis
// they were built from.
func frameGrid(latentH, latentW, patchH, patchW int) (hw [][2]float64, widths []float64) {
	sqrtArea := math.Sqrt(float64(latentH * latentW))
	heights := axisGrid(latentH, patchH, sqrtArea)
	widths = axisGrid(latentW, patchW, sqrtArea)
	hw = make([][2]float64, 0, len(heights)*len(widths))
	for _, h := range heights {
		for _, w := range widths {
			hw = append(hw, [2]float64{h, w})
		}
	}
	return hw, widths
}
