package compute

import (
	"math"
	"testing"
)

// TestHalfRoundTripExact: every non-NaN bf16 and f16 value survives the
// trip through float32 and back.
func TestHalfRoundTripExact(t *testing.T) {
	for _, c := range []struct {
		name string
		to   func(uint16) float32
		from func(float32) uint16
	}{{"bf16", BF16ToF32, BF16FromF32}, {"f16", F16ToF32, F16FromF32}} {
		for h := 0; h < 1<<16; h++ {
			f := c.to(uint16(h))
			if math.IsNaN(float64(f)) {
				continue
			}
			if got := c.from(f); got != uint16(h) {
				t.Fatalf("%s %#04x -> %v -> %#04x", c.name, h, f, got)
			}
		}
	}
}

func TestBF16RoundsToNearestEven(t *testing.T) {
	cases := []struct {
		in   uint32
		want uint16
	}{
		{0x3f808000, 0x3f80}, // tie, even stays
		{0x3f818000, 0x3f82}, // tie, odd rounds up
		{0x3f808001, 0x3f81}, // above tie
		{0x3f807fff, 0x3f80}, // below tie
		{0x7f7fffff, 0x7f80}, // overflow to +Inf
	}
	for _, c := range cases {
		if got := BF16FromF32(math.Float32frombits(c.in)); got != c.want {
			t.Errorf("BF16FromF32(%#08x) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
	if n := BF16FromF32(float32(math.NaN())); n&0x7f80 != 0x7f80 || n&0x7f == 0 {
		t.Errorf("NaN -> %#04x, not a NaN", n)
	}
}

// TestF16AgainstFloat64 checks the rounding of every float32 in a sweep
// against an independent float64 nearest-even search over all halves.
func TestF16AgainstFloat64(t *testing.T) {
	// Sorted list of all finite non-negative halves.
	var vals []float64
	for h := 0; h < 0x7c00; h++ {
		vals = append(vals, float64(F16ToF32(uint16(h))))
	}
	ref := func(x float64) uint16 {
		if x >= 65520 { // halfway between max half (65504) and 2^16 rounds to Inf
			return 0x7c00
		}
		lo, hi := 0, len(vals)-1
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if vals[mid] <= x {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		if lo == len(vals)-1 {
			return uint16(lo)
		}
		d0, d1 := x-vals[lo], vals[lo+1]-x
		if d0 < d1 || (d0 == d1 && lo%2 == 0) {
			return uint16(lo)
		}
		return uint16(lo + 1)
	}
	for b := uint32(0); b < 0x47800000+0x100000; b += 997 {
		f := math.Float32frombits(b)
		if got, want := F16FromF32(f), ref(float64(f)); got != want {
			t.Fatalf("F16FromF32(%v [%#08x]) = %#04x, want %#04x", f, b, got, want)
		}
		if got, want := F16FromF32(-f), ref(float64(f))|0x8000; got != want && f != 0 {
			t.Fatalf("F16FromF32(%v) = %#04x, want %#04x", -f, got, want)
		}
	}
}

func TestParseDType(t *testing.T) {
	for _, d := range []DType{F32, F16, BF16, F64, I64, I32, U8, I8, Bool} {
		got, err := ParseDType(d.String())
		if err != nil || got != d {
			t.Errorf("ParseDType(%q) = %v, %v", d.String(), got, err)
		}
	}
	if _, err := ParseDType("F8_E4M3"); err == nil {
		t.Error("ParseDType accepted an unsupported dtype")
	}
}
