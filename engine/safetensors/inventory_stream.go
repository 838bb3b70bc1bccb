package safetensors

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"h3studio/engine/compute"
)

// StreamChunk is the number of elements of one independently seeded chunk
// of a streamed random tensor. It fixes the values: changing it changes
// every streamed checkpoint.
const StreamChunk = 1 << 16

// StreamEntry returns an entry that streams spec's tensor for seed without
// holding it: the tensor is cut into chunks of StreamChunk elements, each
// drawn from its own generator seeded by (seed, name, chunk index), and the
// chunks are drawn by up to workers goroutines (0: GOMAXPROCS) and written in
// order. The bytes depend only on (seed, name, shape, rule), never on the
// number of workers. (Spec.Values draws one stream per tensor instead; the
// demo checkpoint keeps that rule.)
func (s Spec) StreamEntry(seed uint64, workers int) (Entry, error) {
	if !s.DType.IsFloat() {
		return Entry{}, fmt.Errorf("safetensors: inventory %q: random values need a float dtype, have %s", s.Name, s.DType)
	}
	if s.Init.Kind == InitValues && len(s.Init.Values) != s.Shape.NumElements() {
		return Entry{}, fmt.Errorf("safetensors: inventory %q: %d init values for shape %v", s.Name, len(s.Init.Values), s.Shape)
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	spec := s
	return Entry{Name: s.Name, DType: s.DType, Shape: s.Shape.Clone(), Stream: func(w io.Writer) error {
		return spec.stream(w, seed, workers)
	}}, nil
}

// StreamEntries is StreamEntry for every spec of the inventory.
func (inv Inventory) StreamEntries(seed uint64, workers int) ([]Entry, error) {
	if err := inv.Check(); err != nil {
		return nil, err
	}
	out := make([]Entry, len(inv))
	for i, s := range inv {
		e, err := s.StreamEntry(seed, workers)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// stream draws the tensor chunk by chunk: a batch of chunks in parallel,
// then written in order, so memory stays at a few chunks per worker.
func (s Spec) stream(w io.Writer, seed uint64, workers int) error {
	n := s.Shape.NumElements()
	chunks := (n + StreamChunk - 1) / StreamChunk
	h := fnv.New64a()
	h.Write([]byte(s.Name))
	nameHash := h.Sum64()
	esz := s.DType.Size()
	batch := 4 * workers
	bufs := make([][]byte, batch)
	scratch := make([][]float32, batch)
	for c0 := 0; c0 < chunks; c0 += batch {
		c1 := min(c0+batch, chunks)
		var wg sync.WaitGroup
		next := make(chan int, c1-c0)
		for c := c0; c < c1; c++ {
			next <- c
		}
		close(next)
		for range min(workers, c1-c0) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for c := range next {
					i := c - c0
					lo, hi := c*StreamChunk, min((c+1)*StreamChunk, n)
					if cap(scratch[i]) < hi-lo {
						scratch[i] = make([]float32, StreamChunk)
						bufs[i] = make([]byte, StreamChunk*esz)
					}
					v := scratch[i][:hi-lo]
					s.fillChunk(v, lo, rand.New(rand.NewPCG(seed^nameHash, uint64(c)*0x9e3779b97f4a7c15+nameHash)))
					encodeInto(bufs[i][:(hi-lo)*esz], s.DType, v)
				}
			}()
		}
		wg.Wait()
		for c := c0; c < c1; c++ {
			i := c - c0
			lo, hi := c*StreamChunk, min((c+1)*StreamChunk, n)
			if _, err := w.Write(bufs[i][:(hi-lo)*esz]); err != nil {
				return err
			}
		}
	}
	return nil
}

// fillChunk fills v, the elements [off, off+len(v)) of the tensor, by the
// spec's Init rule from rng.
func (s Spec) fillChunk(v []float32, off int, rng *rand.Rand) {
	scale := float64(s.Init.Scale)
	if s.Init.Kind == InitNormal && scale == 0 {
		fanIn := 1
		for _, d := range s.Shape[min(1, len(s.Shape)):] {
			fanIn *= d
		}
		scale = 1 / math.Sqrt(float64(max(fanIn, 1)))
	}
	switch s.Init.Kind {
	case InitNormal:
		for i := range v {
			v[i] = float32(scale * rng.NormFloat64())
		}
	case InitOnes:
		for i := range v {
			v[i] = float32(1 + scale*rng.NormFloat64())
		}
	case InitConst:
		for i := range v {
			v[i] = s.Init.Scale
		}
	case InitValues:
		copy(v, s.Init.Values[off:off+len(v)])
	case InitUniform:
		lo, hi := float64(s.Init.Lo), float64(s.Init.Hi)
		for i := range v {
			v[i] = float32(lo + (hi-lo)*rng.Float64())
		}
	}
}

// encodeInto writes v in dtype dt (a float dtype) into dst.
func encodeInto(dst []byte, dt compute.DType, v []float32) {
	switch dt {
	case compute.F32:
		for i, f := range v {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(f))
		}
	case compute.BF16:
		for i, f := range v {
			binary.LittleEndian.PutUint16(dst[2*i:], compute.BF16FromF32(f))
		}
	default:
		copy(dst, compute.EncodeFloat32(dt, v))
	}
}
