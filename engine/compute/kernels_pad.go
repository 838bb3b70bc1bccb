package compute

// Padder is the padding kernel family (used by the video VAE's causal 3-D
// convolutions, which pad time with zeros and space by reflection, and by
// the audio VAE's anti-aliased upsampler, which replicates edges before a
// transposed convolution that supports no padding of its own).
type Padder interface {
	// Pad copies x into dst with p.Before[a] leading and p.After[a] trailing
	// elements added on every axis a: dst.Dim(a) == p.Before[a] + x.Dim(a) +
	// p.After[a]. The added elements follow p.Modes[a]: PadZeros writes 0,
	// PadReflect mirrors without repeating the edge (torch "reflect"; needs
	// Before, After < x.Dim(a)), PadReplicate repeats the edge. Nil slices
	// mean 0 and PadZeros. dst and x have the same dtype; values are copied,
	// never rounded.
	Pad(dst, x *Tensor, p PadParams)
}

// PadParams configures Pad: one entry per axis of x (outermost first).
type PadParams struct {
	Before, After []int
	Modes         []PadMode
}

// BeforeAt is the leading padding of axis a.
func (p PadParams) BeforeAt(a int) int { return paramAt(p.Before, a, 0) }

// AfterAt is the trailing padding of axis a.
func (p PadParams) AfterAt(a int) int { return paramAt(p.After, a, 0) }

// ModeAt is the border rule of axis a.
func (p PadParams) ModeAt(a int) PadMode {
	if p.Modes == nil {
		return PadZeros
	}
	return p.Modes[a]
}

// CheckPad panics (through Check) unless Pad(dst, x, p) is well formed:
// equal ranks and dtypes, one parameter per axis, dst.Dim(a) ==
// Before + x.Dim(a) + After, reflect borders shorter than their axis, and
// no reflect or replicate border on an empty axis. Every backend's Pad
// checks its arguments with it.
func CheckPad(dst, x *Tensor, p PadParams) {
	r := x.Rank()
	Check(dst.Rank() == r && r >= 1, "Pad", "x %v into dst %v: ranks differ", x, dst)
	Check(dst.DType() == x.DType(), "Pad", "dtype %v -> %v", x.DType(), dst.DType())
	Check((p.Before == nil || len(p.Before) == r) && (p.After == nil || len(p.After) == r) && (p.Modes == nil || len(p.Modes) == r),
		"Pad", "parameters %+v for rank %d", p, r)
	for a := 0; a < r; a++ {
		lo, hi := p.BeforeAt(a), p.AfterAt(a)
		Check(lo >= 0 && hi >= 0 && dst.Dim(a) == lo+x.Dim(a)+hi, "Pad", "axis %d: %d + %d + %d != %d (x %v dst %v)", a, lo, x.Dim(a), hi, dst.Dim(a), x, dst)
		if p.ModeAt(a) == PadReflect {
			Check(lo < x.Dim(a) && hi < x.Dim(a), "Pad", "axis %d: reflect padding %d/%d needs more than %d elements", a, lo, hi, x.Dim(a))
		}
		if p.ModeAt(a) != PadZeros {
			Check(x.Dim(a) > 0, "Pad", "axis %d: cannot %v-pad an empty axis", a, p.ModeAt(a))
		}
	}
}
