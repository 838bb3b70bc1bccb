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
