package safetensors

import (
	"fmt"
	"sort"
	"strings"

	"h3studio/engine/compute"
)

// Binder hands checkpoint tensors to one model component. It records the
// first error and every name handed out, so a component's Load reads top to
// bottom and Finish reports what was never used. Not safe for concurrent use.
type Binder struct {
	component string
	src       Source
	b         compute.Backend
	prefix    string
	st        *binderState
}

type binderState struct {
	mapped map[*byte]bool // shards registered with a compute.HostMapper
	used   map[string]bool
	errs   []string
	more   int   // errors beyond the first maxErrors, counted only
	copies int64 // bytes converted at load
}

// NewBinder starts binding src's tensors for component (used in messages,
// e.g. "dit") onto backend b.
func NewBinder(component string, src Source, b compute.Backend) *Binder {
	return &Binder{component: component, src: src, b: b, st: &binderState{used: map[string]bool{}}}
}

// Sub returns a binder for names under prefix ("blocks.3." + name).
func (w *Binder) Sub(prefix string) *Binder {
	c := *w
	c.prefix = w.prefix + prefix
	return &c
}

// Backend is the backend tensors are bound onto.
func (w *Binder) Backend() compute.Backend { return w.b }

// Source is the underlying tensor source.
func (w *Binder) Source() Source { return w.src }

// maxErrors is how many errors a Binder keeps (and Err shows); the rest are
// counted. A corrupt config describing a billion tensors would otherwise
// exhaust memory recording each as missing.
const maxErrors = 12

func (w *Binder) fail(format string, args ...any) {
	if len(w.st.errs) >= maxErrors {
		w.st.more++
		return
	}
	w.st.errs = append(w.st.errs, fmt.Sprintf(format, args...))
}

// Has reports whether the (prefixed) tensor exists, without using it.
func (w *Binder) Has(name string) bool {
	_, ok := w.src.Info(w.prefix + name)
	return ok
}

// Info returns the (prefixed) tensor's description without using it.
func (w *Binder) Info(name string) (TensorInfo, bool) { return w.src.Info(w.prefix + name) }

// Tensor binds the tensor in its stored dtype. shape, when given, must match.
// A missing or mis-shaped tensor is recorded and nil is returned, and so is
// one stored in an integer or boolean dtype: model weights are floating
// point (bind an integer tensor with TensorAs and an integer dtype).
func (w *Binder) Tensor(name string, shape ...int) *compute.Tensor {
	return w.bind(name, compute.Invalid, shape)
}

// TensorAs binds the tensor converted to dt (a zero-copy view when the stored
// dtype is dt). shape, when given, must match; a floating-point dt needs a
// floating-point stored dtype (an I32 tensor is not converted by value).
func (w *Binder) TensorAs(name string, dt compute.DType, shape ...int) *compute.Tensor {
	return w.bind(name, dt, shape)
}

// Raw returns a tensor's stored dtype, shape and bytes (nil for a data-less
// planning inventory), marking it used; shape, when given, must match. ok is
// false (and the binder failed) when it is missing or the shape differs.
func (w *Binder) Raw(name string, shape ...int) (info TensorInfo, data []byte, ok bool) {
	full := w.prefix + name
	info, ok = w.src.Info(full)
	if !ok {
		w.fail("%s: missing tensor %s", w.component, full)
		return info, nil, false
	}
	if !w.checkShape(full, info, shape) {
		return info, nil, false
	}
	w.st.used[full] = true
	data, err := w.src.Data(full)
	if err != nil {
		w.fail("%s: %s: %v", w.component, full, err)
		return info, nil, false
	}
	return info, data, true
}

// Float32s reads a (small) tensor as float32 host values, marking it used.
func (w *Binder) Float32s(name string, shape ...int) []float32 {
	full := w.prefix + name
	info, ok := w.src.Info(full)
	if !ok {
		w.fail("%s: missing tensor %s", w.component, full)
		return nil
	}
	if !w.checkShape(full, info, shape) || !w.checkFloat(full, info, compute.F32) {
		return nil
	}
	w.st.used[full] = true
	data, err := w.src.Data(full)
	if err != nil || data == nil {
		if err != nil {
			w.fail("%s: %s: %v", w.component, full, err)
		}
		return make([]float32, info.Shape.NumElements())
	}
	return compute.DecodeFloat32(info.DType, data)
}

// checkFloat records a tensor stored in a non-float dtype that is to be
// read as the float dtype want (compute.Invalid: the stored dtype, as model
// weights, so a float one).
func (w *Binder) checkFloat(full string, info TensorInfo, want compute.DType) bool {
	if (want == compute.Invalid || want.IsFloat()) && !info.DType.IsFloat() {
		w.fail("%s: %s: stored as %s, not a floating-point dtype", w.component, full, info.DType)
		return false
	}
	return true
}

func (w *Binder) checkShape(full string, info TensorInfo, shape []int) bool {
	if len(shape) > 0 && !info.Shape.Equal(compute.Shape(shape)) {
		w.fail("%s: %s: want shape %v, have %s%v", w.component, full, compute.Shape(shape), info.DType, info.Shape)
		return false
	}
	return true
}

// Skip marks tensors as deliberately unused (e.g. a buffer the component
// recomputes, such as rope.inv_freq).
func (w *Binder) Skip(names ...string) {
	for _, n := range names {
		if w.Has(n) {
			w.st.used[w.prefix+n] = true
		}
	}
}

func (w *Binder) bind(name string, dt compute.DType, shape []int) *compute.Tensor {
	full := w.prefix + name
	info, ok := w.src.Info(full)
	if !ok {
		w.fail("%s: missing tensor %s", w.component, full)
		return nil
	}
	if !w.checkShape(full, info, shape) || !w.checkFloat(full, info, dt) {
		return nil
	}
	if w.st.used[full] {
		// Binding twice is allowed (shared weights), but a second
		// conversion would duplicate memory: callers should keep the first.
	}
	w.st.used[full] = true
	want := info.DType
	if dt != compute.Invalid {
		want = dt
	}
	data, err := w.src.Data(full)
	if err != nil {
		w.fail("%s: %s: %v", w.component, full, err)
		return nil
	}
	var t *compute.Tensor
	switch {
	case data == nil: // data-less inventory (planning): storage only
		t, err = w.b.Alloc(want, info.Shape...)
	case want == info.DType:
		w.mapShard(full)
		t, err = w.b.Wrap(want, info.Shape, data)
	case info.DType.IsFloat() && want.IsFloat():
		if t, err = w.b.Alloc(want, info.Shape...); err == nil {
			err = compute.UploadConverted(w.b, t, info.DType, data)
			w.st.copies += t.Bytes()
		}
	default:
		vals := compute.DecodeFloat32(info.DType, data)
		t, err = compute.FromFloat32(w.b, want, info.Shape, vals)
		if err == nil {
			w.st.copies += t.Bytes()
			w.Release(name) // the copy is bound: the stored bytes are not read again
		}
	}
	if err != nil {
		w.fail("%s: %s: %v", w.component, full, err)
		return nil
	}
	return t.SetName(full)
}

// mapShard registers the mapped shard holding tensor name with a backend
// that views mappings without copying (compute.HostMapper), once per shard.
func (w *Binder) mapShard(name string) {
	hm, ok := w.b.(compute.HostMapper)
	if !ok {
		return
	}
	src, ok := w.src.(mappedSource)
	if !ok {
		return
	}
	m := src.MappingOf(name)
	if len(m) == 0 {
		return
	}
	if w.st.mapped == nil {
		w.st.mapped = map[*byte]bool{}
	}
	if w.st.mapped[&m[0]] {
		return
	}
	w.st.mapped[&m[0]] = true
	if hm.MapHost(m) == nil { // on failure Wrap copies
		src.registered(name, hm)
	}
}

// mappedSource is a Source over mapped files (File, Checkpoint), which
// have the backends that registered a mapping forget it when they close.
type mappedSource interface {
	MappingOf(name string) []byte
	registered(name string, hm compute.HostMapper)
}

// Fail records a component-specific binding error (e.g. a config that
// disagrees with a tensor shape).
func (w *Binder) Fail(format string, args ...any) {
	w.fail("%s: "+format, append([]any{w.component}, args...)...)
}

// Err returns the recorded errors joined, or nil.
func (w *Binder) Err() error {
	if len(w.st.errs) == 0 {
		return nil
	}
	if w.st.more > 0 {
		return fmt.Errorf("%s\n… and %d more", strings.Join(w.st.errs, "\n"), w.st.more)
	}
	return fmt.Errorf("%s", strings.Join(w.st.errs, "\n"))
}

// Unused lists source tensors under the binder's prefix never bound or
// skipped, excluding names with one of the ignored prefixes.
func (w *Binder) Unused(ignored ...string) []string {
	var out []string
	for _, n := range w.src.Names() {
		if !strings.HasPrefix(n, w.prefix) || w.st.used[n] {
			continue
		}
		skip := false
		for _, ig := range ignored {
			if strings.HasPrefix(n, ig) {
				skip = true
				break
			}
		}
		if !skip {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Finish returns Err, plus an "unexpected tensor" error for every unused
// name (see Unused).
func (w *Binder) Finish(ignored ...string) error {
	for _, n := range w.Unused(ignored...) {
		w.fail("%s: unexpected tensor %s", w.component, n)
	}
	return w.Err()
}

// ConvertedBytes is the storage made by dtype conversions at load.
func (w *Binder) ConvertedBytes() int64 { return w.st.copies }

// BindDir maps the checkpoint in dir and runs load with a binder of it for
// component on b. On success the caller owns the checkpoint (the bound
// tensors may point into its mapping); on failure it is closed.
func BindDir[T any](component, dir string, b compute.Backend, load func(*Binder) (T, error)) (T, *Checkpoint, error) {
	var zero T
	ck, err := OpenDir(dir)
	if err != nil {
		return zero, nil, fmt.Errorf("%s: %w", component, err)
	}
	m, err := load(NewBinder(component, ck, b))
	if err != nil {
		ck.Close()
		return zero, nil, err
	}
	return m, ck, nil
}
