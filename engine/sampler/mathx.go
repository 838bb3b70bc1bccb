package sampler

import "math"

// Portable float64 elementary functions for the noise generators. Go's math
// functions are not bit-reproducible across platforms: Log and Exp have
// assembly versions on amd64 and arm64, and the compiler fuses the pure-Go
// polynomials into FMAs on arm64 but not on amd64. These routines use only
// IEEE +, −, ×, ÷ and √, with every product rounded explicitly (a float64
// conversion forbids fusion), so they give the same bits everywhere. They
// follow the classic fdlibm algorithms (e_log.c, k_sin.c, k_cos.c; the
// coefficients are the published minimax ones) and are accurate to about one
// ulp, which is all the float32 noise needs.

const (
	ln2Hi = 6.93147180369123816490e-01 // 0x3fe62e42fee00000
	ln2Lo = 1.90821492927058770002e-10 // 0x3dea39ef35793c76
	lg1   = 6.666666666666735130e-01
	lg2   = 3.999999999940941908e-01
	lg3   = 2.857142874366239149e-01
	lg4   = 2.222219843214978396e-01
	lg5   = 1.818357216161805012e-01
	lg6   = 1.531383769920937332e-01
	lg7   = 1.479819860511658591e-01

	sinS1 = -1.66666666666666324348e-01
	sinS2 = 8.33333333332248946124e-03
	sinS3 = -1.98412698298579493134e-04
	sinS4 = 2.75573137070700676789e-06
	sinS5 = -2.50507602534068634195e-08
	sinS6 = 1.58969099521155010221e-10

	cosC1 = 4.16666666666666019037e-02
	cosC2 = -1.38888888888741095749e-03
	cosC3 = 2.48015872894767294178e-05
	cosC4 = -2.75573143513906633035e-07
	cosC5 = 2.08757232129817482790e-09
	cosC6 = -1.13596475577881948265e-11

	halfPi = math.Pi / 2
)

// mul is a rounded product: the conversion stops the compiler from fusing it
// into a following addition.
func mul(a, b float64) float64 { return float64(a * b) }

// portableLog is the natural logarithm of x > 0 (finite, normal or
// subnormal); it returns -Inf for 0 and NaN for negative or NaN input.
func portableLog(x float64) float64 {
	switch {
	case math.IsNaN(x) || x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	case math.IsInf(x, 1):
		return x
	}
	f1, ki := math.Frexp(x) // x = f1·2^ki, f1 in [0.5, 1)
	if f1 < math.Sqrt2/2 {
		f1 *= 2
		ki--
	}
	f := f1 - 1
	k := float64(ki)
	s := f / (2 + f)
	s2 := mul(s, s)
	s4 := mul(s2, s2)
	t1 := mul(s2, lg1+mul(s4, lg3+mul(s4, lg5+mul(s4, lg7))))
	t2 := mul(s4, lg2+mul(s4, lg4+mul(s4, lg6)))
	r := t1 + t2
	hfsq := mul(mul(0.5, f), f)
	return mul(k, ln2Hi) - ((hfsq - (mul(s, hfsq+r) + mul(k, ln2Lo))) - f)
}

// kernelSin and kernelCos approximate sin and cos on [−π/4, π/4].
func kernelSin(x float64) float64 {
	z := mul(x, x)
	v := mul(z, x)
	r := sinS2 + mul(z, sinS3+mul(z, sinS4+mul(z, sinS5+mul(z, sinS6))))
	return x + mul(v, sinS1+mul(z, r))
}

func kernelCos(x float64) float64 {
	z := mul(x, x)
	r := mul(z, cosC1+mul(z, cosC2+mul(z, cosC3+mul(z, cosC4+mul(z, cosC5+mul(z, cosC6))))))
	hz := mul(0.5, z)
	w := 1 - hz
	return w + (((1 - w) - hz) + mul(z, r))
}

// sinCosTurns returns sin(2πu) and cos(2πu) for u in [0, 1). The argument is
// reduced exactly in turns (quarter turns and their complements are exact
// binary operations), so only the final angle a ∈ [0, π/4] is rounded.
func sinCosTurns(u float64) (sin, cos float64) {
	v := u * 4 // exact
	q := math.Floor(v)
	f := v - q // exact, in [0, 1)
	var s, c float64
	if f <= 0.5 {
		a := mul(f, halfPi)
		s, c = kernelSin(a), kernelCos(a)
	} else {
		a := mul(1-f, halfPi) // 1 − f is exact for f in (0.5, 1)
		s, c = kernelCos(a), kernelSin(a)
	}
	switch int(q) & 3 {
	case 0:
		return s, c
	case 1:
		return c, -s
	case 2:
		return -s, -c
	default:
		return -c, s
	}
}

// boxMuller turns u1 in (0, 1] and u2 in [0, 1) into two standard normals
// r·cos(2πu2) and r·sin(2πu2), r = √(−2 ln u1).
func boxMuller(u1, u2 float64) (float64, float64) {
	r := math.Sqrt(-2 * portableLog(u1))
	s, c := sinCosTurns(u2)
	return mul(r, c), mul(r, s)
}
