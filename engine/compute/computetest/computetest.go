// Package computetest is the conformance suite of compute backends: RunAll
// checks every operation of compute.Kernels on a backend against the CPU
// reference (package cpu, the executable specification) over fixed shapes,
// odd sizes included, and every float storage pair.
//
// Each case places its tensors inside larger buffers at element offsets, with
// sentinel bytes before and after each view, fills the output with a poison
// pattern (0xFF bytes: NaN for floats) unless the operation keeps parts of it,
// runs the operation on both backends and then checks that
//   - the sentinels around the output are intact (no out-of-bounds writes),
//   - the inputs are unchanged (no stray writes),
//   - every output element is within the case's bound of the reference:
//     bit for bit where the semantics allow (data movement, conversions,
//     single float operations, the documented bf16 chains), otherwise a
//     bound derived from the operation (ulps of the output type for a
//     rounding flip, plus a relative term over the magnitude of the terms
//     summed: Σ|x·w| for a matrix product).
//
// One case list serves every backend: the CPU backend checks itself (any
// thread count gives the same bits), the Metal backend runs it on a Mac
// (`make parity`) and, on Linux, through the MSL-on-CPU harness.
package computetest

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
)

// Options configure RunAll.
type Options struct {
	// Reference computes the expected results; nil means the CPU backend.
	Reference compute.Backend
	// Filter runs only the cases whose name matches this regular expression.
	Filter string
	// Large adds big shapes (for real devices; too slow to emulate).
	Large bool
	// AfterCase is called after each case with its name and whether it passed.
	AfterCase func(name string, passed bool)
}

// RunAll runs every case as a subtest of t.
func RunAll(t *testing.T, b compute.Backend, o Options) {
	ref := o.Reference
	if ref == nil {
		ref = cpu.New(cpu.Options{Threads: 1})
	}
	var filter *regexp.Regexp
	if o.Filter != "" {
		filter = regexp.MustCompile(o.Filter)
	}
	ran := 0
	for _, c := range Cases(o) {
		if filter != nil && !filter.MatchString(c.Name) {
			continue
		}
		ran++
		passed := t.Run(c.Name, func(t *testing.T) { runCase(t, ref, b, c) })
		if o.AfterCase != nil {
			o.AfterCase(c.Name, passed)
		}
	}
	// The quantized product against the unquantized weight (the cases
	// above check it against the dequantized one).
	for _, f := range []compute.QuantFormat{compute.Int4, compute.Int8} {
		name := fmt.Sprintf("MatMul/q%d/quant_step", f.Bits)
		if filter != nil && !filter.MatchString(name) {
			continue
		}
		ran++
		passed := t.Run(name, func(t *testing.T) {
			if err := QuantStepCheck(b, f, 19, 40, 320, seedOf(name)); err != nil {
				t.Fatal(err)
			}
		})
		if o.AfterCase != nil {
			o.AfterCase(name, passed)
		}
	}
	if ran == 0 {
		t.Fatalf("computetest: no case matches %q", o.Filter)
	}
}

// Tensor describes one operand.
type Tensor struct {
	DType compute.DType
	Shape []int
	Gen   Gen
}

// Gen says how an operand's values are drawn.
type Gen struct {
	Kind  GenKind
	Scale float64 // Normal: standard deviation; Uniform: [Lo, Hi)
	Lo    float64
	Hi    float64
	N     int // Index, Perm: values in [0, N)
}

// GenKind is a distribution.
type GenKind int

// Distributions.
const (
	Normal   GenKind = iota // N(0, Scale²); Scale 0 means 1
	Uniform                 // [Lo, Hi)
	Index                   // integers in [0, N), repeats allowed
	Perm                    // distinct integers in [0, N)
	Ints                    // integers in [Lo, Hi]
	Specials                // rounding corner cases: ties, overflow, subnormals, ±0, ±Inf, NaN
	// QuantWeight is the U32 storage [rows, RowWords(N)] of a weight of N
	// inputs drawn from N(0, Scale²) and quantized (engine/quant) to Lo bits
	// in groups of 64 (quantcases.go).
	QuantWeight
)

// specials are float32 values at the corners of rounding to bf16 and f16.
var specials = func() []float64 {
	v := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
		1 + 0x1p-8, 1 + 3*0x1p-8, -(1 + 0x1p-8), 1 + 0x1p-8 + 0x1p-23, // bf16 ties and just past
		1 + 0x1p-11, 1 + 3*0x1p-11, -(1 + 3*0x1p-11), // f16 ties
		65504, 65519, 65520, -65520, 0x1p-24, 0x1p-25, 3 * 0x1p-25, 0x1p-14, 0x1p-15 + 0x1p-25, // f16 range and subnormals
		float64(math.MaxFloat32), float64(math.Float32frombits(0x7f7fffff)), 0x1p-126, 0x1p-127, 0x1p-149, -0x1p-140,
		float64(math.Float32frombits(0x3f808000)), float64(math.Float32frombits(0x3f818000)), float64(math.Float32frombits(0xc0028000)),
	}
	return v
}()

// Bound is the accepted difference from the reference, per element:
// ULP units of the output type at |want| (a rounding flip), plus Rel times
// the element's magnitude (|want|, or Mag), plus RMS times the root mean
// square of want (errors from cancellation), plus Abs. Exact compares bits.
type Bound struct {
	Exact bool
	ULP   float64
	Rel   float64
	RMS   float64
	Abs   float64
}

// Case is one conformance check.
type Case struct {
	Name string
	In   []Tensor
	Out  Tensor
	// InPlace, when >= 0, makes the output the same view as input InPlace
	// (Out is then ignored). Cases are built with InPlace -1.
	InPlace int
	// Keep fills the output with values from Out.Gen instead of poison (an
	// operation that leaves parts of its output alone).
	Keep  bool
	Run   func(k compute.Kernels, dst *compute.Tensor, in []*compute.Tensor)
	Bound Bound
	// Mag computes per-element magnitudes of the terms behind each output
	// (F32 dst) on the reference, from the absolute values of the inputs;
	// nil means |want|.
	Mag func(k compute.Kernels, dst *compute.Tensor, in []*compute.Tensor)
	// MagAbs selects the inputs Mag sees as absolute values; nil means all.
	MagAbs []bool
	// Unfused, when set, is Run's definition as a sequence of unfused
	// kernels (a fused kernel's compute.Unfused* function). The expected
	// result is then Unfused run on the backend under test itself, not on
	// the reference: Bound says how far a backend's fused kernel may be from
	// its own unfused kernels (Exact: bit-identical).
	Unfused func(k compute.Kernels, dst *compute.Tensor, in []*compute.Tensor)
}

const sentinel = 0xA5

func seedOf(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// hostValues draws an operand's values (as float64) and encodes them.
func hostValues(rng *rand.Rand, t Tensor) ([]float64, []byte) {
	n := compute.Shape(t.Shape).NumElements()
	v := make([]float64, n)
	g := t.Gen
	switch g.Kind {
	case Normal:
		s := g.Scale
		if s == 0 {
			s = 1
		}
		for i := range v {
			v[i] = rng.NormFloat64() * s
		}
	case Uniform:
		for i := range v {
			v[i] = g.Lo + rng.Float64()*(g.Hi-g.Lo)
		}
	case Index:
		for i := range v {
			v[i] = float64(rng.IntN(g.N))
		}
	case Perm:
		p := rng.Perm(g.N)
		for i := range v {
			v[i] = float64(p[i])
		}
	case Ints:
		for i := range v {
			v[i] = float64(int(g.Lo) + rng.IntN(int(g.Hi-g.Lo)+1))
		}
	case Specials:
		for i := range v {
			v[i] = specials[i%len(specials)]
		}
	case QuantWeight:
		v = quantWeightValues(rng, t)
	}
	if t.DType.IsInt() {
		iv := make([]int64, n)
		for i := range v {
			iv[i] = int64(v[i])
		}
		return v, compute.EncodeInt64(t.DType, iv)
	}
	if t.DType == compute.F64 {
		return v, compute.EncodeFloat64(v)
	}
	f := make([]float32, n)
	for i := range v {
		f[i] = float32(v[i])
	}
	b := compute.EncodeFloat32(t.DType, f)
	dec := compute.DecodeFloat32(t.DType, b)
	for i := range v {
		v[i] = float64(dec[i])
	}
	return v, b
}

// placed is an operand inside a larger buffer: flat holds pre sentinel
// elements, the view, and post sentinel elements.
type placed struct {
	flat, view *compute.Tensor
	bytes      []byte // what was uploaded into flat
	pre        int    // bytes before the view
}

func place(b compute.Backend, dt compute.DType, shape []int, preElems, postElems int, data []byte) (*placed, error) {
	n := compute.Shape(shape).NumElements()
	es := dt.Size()
	flat, err := b.Alloc(dt, preElems+n+postElems)
	if err != nil {
		return nil, err
	}
	all := make([]byte, (preElems+n+postElems)*es)
	for i := range all {
		all[i] = sentinel
	}
	copy(all[preElems*es:], data)
	if err := b.Upload(flat, all); err != nil {
		return nil, err
	}
	view := flat.Rows(preElems, preElems+n).Reshape(shape...)
	return &placed{flat: flat, view: view, bytes: all, pre: preElems * es}, nil
}

func download(b compute.Backend, t *compute.Tensor) ([]byte, error) {
	out := make([]byte, t.Bytes())
	err := b.Download(out, t)
	return out, err
}

// run executes one case on backend be with the given input bytes and
// output initial bytes; it returns the downloaded output buffer and checks
// sentinels and inputs.
func execute(be compute.Backend, c Case, inBytes [][]byte, outInit []byte, check bool) (out []byte, pre int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s panicked: %v", be.Name(), r)
		}
	}()
	var ins []*placed
	defer func() {
		for _, p := range ins {
			be.Free(p.flat)
		}
	}()
	views := make([]*compute.Tensor, len(c.In))
	for i, t := range c.In {
		p, err := place(be, t.DType, t.Shape, 1+(3*i)%5, 2+i%3, inBytes[i])
		if err != nil {
			return nil, 0, err
		}
		ins = append(ins, p)
		views[i] = p.view
	}
	var dst *placed
	if c.InPlace >= 0 {
		dst = ins[c.InPlace]
	} else {
		dst, err = place(be, c.Out.DType, c.Out.Shape, 3, 4, outInit)
		if err != nil {
			return nil, 0, err
		}
		ins = append(ins, dst)
	}
	c.Run(be, dst.view, views)
	if err := be.Sync(context.Background()); err != nil {
		return nil, 0, err
	}
	all, err := download(be, dst.flat)
	if err != nil {
		return nil, 0, err
	}
	if check {
		n := int(dst.view.Bytes())
		for i, v := range all {
			if (i < dst.pre || i >= dst.pre+n) && v != dst.bytes[i] {
				return nil, 0, fmt.Errorf("%s wrote outside the output view: byte %d of the buffer (view is [%d, %d)) changed from %#x to %#x",
					be.Name(), i, dst.pre, dst.pre+n, dst.bytes[i], v)
			}
		}
		for i, p := range ins {
			if p == dst || (c.InPlace >= 0 && i == c.InPlace) {
				continue
			}
			got, err := download(be, p.flat)
			if err != nil {
				return nil, 0, err
			}
			for j := range got {
				if got[j] != p.bytes[j] {
					return nil, 0, fmt.Errorf("%s changed input %d (byte %d of its buffer)", be.Name(), i, j)
				}
			}
		}
	}
	return all[dst.pre : dst.pre+int(dst.view.Bytes())], dst.pre, nil
}

func runCase(t *testing.T, ref, b compute.Backend, c Case) {
	if err := Check(ref, b, c); err != nil {
		t.Fatal(err)
	}
}

// Check runs one case on b and on the reference ref and returns what fails.
func Check(ref, b compute.Backend, c Case) error {
	rng := rand.New(rand.NewPCG(seedOf(c.Name), 7))
	inVals := make([][]float64, len(c.In))
	inBytes := make([][]byte, len(c.In))
	for i, in := range c.In {
		inVals[i], inBytes[i] = hostValues(rng, in)
	}
	out := c.Out
	if c.InPlace >= 0 {
		out = c.In[c.InPlace]
	}
	var outInit []byte
	if c.Keep {
		_, outInit = hostValues(rng, out)
	} else {
		outInit = make([]byte, compute.Shape(out.Shape).NumElements()*out.DType.Size())
		for i := range outInit {
			outInit[i] = 0xFF
		}
	}
	var want []byte
	var err error
	if c.Unfused != nil {
		u := c
		u.Run = c.Unfused
		want, _, err = execute(b, u, inBytes, outInit, true)
		if err != nil {
			return fmt.Errorf("unfused sequence: %w", err)
		}
	} else {
		want, _, err = execute(ref, c, inBytes, outInit, false)
		if err != nil {
			return fmt.Errorf("reference: %w", err)
		}
	}
	got, _, err := execute(b, c, inBytes, outInit, true)
	if err != nil {
		return err
	}
	var mag []float64
	if c.Mag != nil && !c.Bound.Exact {
		mag, err = magnitudes(ref, c, inVals, out.Shape)
		if err != nil {
			return fmt.Errorf("magnitudes: %w", err)
		}
	}
	if msg := compare(out.DType, got, want, mag, c.Bound); msg != "" {
		return errors.New(msg)
	}
	return nil
}

// magnitudes runs c.Mag on the reference with |inputs| into an F32 output.
func magnitudes(ref compute.Backend, c Case, inVals [][]float64, shape []int) ([]float64, error) {
	ins := make([]*compute.Tensor, len(c.In))
	for i, in := range c.In {
		dt := in.DType
		if !dt.IsInt() {
			dt = compute.F32
		}
		abs := c.MagAbs == nil || c.MagAbs[i]
		if in.Gen.Kind == QuantWeight {
			var err error
			if ins[i], err = quantWeightMagnitudes(ref, in, inVals[i]); err != nil {
				return nil, err
			}
			continue
		}
		v := make([]float32, len(inVals[i]))
		for j, x := range inVals[i] {
			if dt == compute.F32 && abs {
				x = math.Abs(x)
			}
			v[j] = float32(x)
		}
		var err error
		if dt.IsInt() {
			iv := make([]int64, len(v))
			for j := range v {
				iv[j] = int64(v[j])
			}
			ins[i], err = compute.FromInt64(ref, dt, in.Shape, iv)
		} else {
			ins[i], err = compute.FromFloat32(ref, dt, in.Shape, v)
		}
		if err != nil {
			return nil, err
		}
	}
	dst, err := ref.Alloc(compute.F32, shape...)
	if err != nil {
		return nil, err
	}
	c.Mag(ref, dst, ins)
	v, err := compute.ToFloat32(dst)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Abs(float64(x))
	}
	return out, nil
}

// ulp is the spacing of dtype dt's values at |v|.
func ulp(dt compute.DType, v float64) float64 {
	v = math.Abs(v)
	var mant, minExp int
	switch dt {
	case compute.F32:
		mant, minExp = 23, -126
	case compute.BF16:
		mant, minExp = 7, -126
	case compute.F16:
		mant, minExp = 10, -14
	default:
		return 1
	}
	e := minExp
	if v > 0 {
		_, ex := math.Frexp(v) // v = f·2^ex, f in [0.5, 1)
		e = max(ex-1, minExp)
	}
	return math.Ldexp(1, e-mant)
}

func decode(dt compute.DType, b []byte) []float64 {
	n := len(b) / dt.Size()
	out := make([]float64, n)
	switch {
	case dt == compute.F64:
		for i := range out {
			out[i] = math.Float64frombits(leU64(b[8*i:]))
		}
	case dt.IsInt():
		for i, v := range compute.DecodeInt64(dt, b) {
			out[i] = float64(v)
		}
	default:
		for i, v := range compute.DecodeFloat32(dt, b) {
			out[i] = float64(v)
		}
	}
	return out
}

func leU64(b []byte) uint64 {
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 | uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// compare checks got against want; it returns a report of the worst
// violations, or "".
func compare(dt compute.DType, got, want []byte, mag []float64, bd Bound) string {
	if len(got) != len(want) {
		return fmt.Sprintf("output has %d bytes, reference %d", len(got), len(want))
	}
	es := dt.Size()
	g, w := decode(dt, got), decode(dt, want)
	var rms float64
	for _, x := range w {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			rms += x * x
		}
	}
	rms = math.Sqrt(rms / float64(max(len(w), 1)))
	var bad []string
	nbad := 0
	var num, den, worst float64
	for i := range w {
		if bd.Exact {
			if string(got[i*es:(i+1)*es]) != string(want[i*es:(i+1)*es]) && !(math.IsNaN(g[i]) && math.IsNaN(w[i])) {
				nbad++
				if len(bad) < 6 {
					bad = append(bad, fmt.Sprintf("[%d] got %v (% x), want %v (% x)", i, g[i], got[i*es:(i+1)*es], w[i], want[i*es:(i+1)*es]))
				}
			}
			continue
		}
		if math.IsNaN(w[i]) || math.IsInf(w[i], 0) {
			if !(math.IsNaN(w[i]) && math.IsNaN(g[i])) && g[i] != w[i] {
				nbad++
				if len(bad) < 6 {
					bad = append(bad, fmt.Sprintf("[%d] got %v, want %v", i, g[i], w[i]))
				}
			}
			continue
		}
		m := math.Abs(w[i])
		if mag != nil {
			m = mag[i]
		}
		allowed := bd.ULP*ulp(dt, w[i]) + bd.Rel*m + bd.RMS*rms + bd.Abs
		d := math.Abs(g[i] - w[i])
		num += d * d
		den += w[i] * w[i]
		if allowed > 0 {
			worst = max(worst, d/allowed)
		} else if d > 0 {
			worst = math.Inf(1)
		}
		if !(d <= allowed) {
			nbad++
			if len(bad) < 6 {
				bad = append(bad, fmt.Sprintf("[%d] got %.9g, want %.9g: |diff| %.3g > bound %.3g", i, g[i], w[i], d, allowed))
			}
		}
	}
	if nbad == 0 {
		return ""
	}
	rel := math.Sqrt(num / math.Max(den, 1e-300))
	return fmt.Sprintf("%d of %d elements outside the bound %+v (rel-L2 %.3g, worst diff/bound %.3g):\n  %s",
		nbad, len(w), bd, rel, worst, strings.Join(bad, "\n  "))
}
