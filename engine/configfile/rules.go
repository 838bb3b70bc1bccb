package configfile

import (
	"fmt"
	"math"
	"strings"
)

// CheckStd checks latents_std (already read with Floats): every standard
// deviation positive and finite as the float32 the model uses.
func (o *Object) CheckStd(std []float64) {
	if o.Err() != nil {
		return
	}
	for i, s := range std {
		if err := checkStat(float32(s), true); err != "" {
			o.Fail("latents_std", "entry %d is %v; a standard deviation %s", i, s, err)
			return
		}
	}
}

// LatentStats converts a VAE config's latents_mean and latents_std as
// torch.tensor(list) does (the nearest float32 of each number); path names
// the file when one is missing. CheckLatentStats checks them.
func LatentStats(path string, mean, std []float64) (m, s []float32, err error) {
	for _, k := range []struct {
		key string
		v   []float64
	}{{"latents_mean", mean}, {"latents_std", std}} {
		if k.v == nil {
			return nil, nil, fmt.Errorf("%s: missing required key %q", path, k.key)
		}
	}
	f32 := func(v []float64) []float32 {
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = float32(x)
		}
		return out
	}
	return f32(mean), f32(std), nil
}

// CheckLatentStats checks a VAE's latent normalization, z_norm =
// (z − mean)/std per channel: one mean and one standard deviation per
// latent channel, every deviation positive and finite, every mean finite.
// The error says which entry breaks which rule (the VAE packages prefix
// their name; the config file readers, which check the files' numbers the
// same way, name the file and field).
func CheckLatentStats(mean, std []float32, channels int) error {
	if len(mean) != channels || len(std) != channels {
		return fmt.Errorf("latents_mean has %d and latents_std %d values for %d latent channels", len(mean), len(std), channels)
	}
	for i := range std {
		if err := checkStat(std[i], true); err != "" {
			return fmt.Errorf("latents_std[%d] = %v %s", i, std[i], err)
		}
		if err := checkStat(mean[i], false); err != "" {
			return fmt.Errorf("latents_mean[%d] = %v %s", i, mean[i], err)
		}
	}
	return nil
}

// checkStat is the rule of one statistic: finite, and positive for a
// standard deviation ("" when it holds).
func checkStat(v float32, deviation bool) string {
	f := float64(v)
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return "must be finite"
	case deviation && !(v > 0):
		return "must be positive"
	}
	return ""
}

// Product multiplies v (0 for a nil list, as a missing field reads).
func Product(v []int) int {
	if v == nil {
		return 0
	}
	p := 1
	for _, x := range v {
		p *= x
	}
	return p
}

// PlainName reports whether s names an entry inside a folder: no path
// separator, not "." or "..".
func PlainName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`)
}
