package qwen3vl

import (
	"fmt"
	"strconv"

	"h3studio/engine/compute"
	"h3studio/engine/condcache"
)

// Cache keys of the text encoder's results (engine/condcache). A key covers
// everything the result depends on: the checkpoint identity, the number of
// layers run, the precision, the token ids and the vision pixels with their
// grids. Bump the version suffix when the computation changes.
const (
	textKind   = "qwen3vl.text/v1"
	visionKind = "qwen3vl.vision/v1"
)

// TextKey is the cache key of a request's conditioning.
func (m *Model) TextKey(in *Input, precision compute.DType) condcache.Key {
	h := condcache.NewHasher(textKind).String(m.identity).Int(int64(m.layers)).String(precision.String()).Int64s(in.IDs)
	for _, set := range [][]VisionInput{in.Images, in.Videos} {
		h.Int(int64(len(set)))
		for _, v := range set {
			h.Int(int64(v.Grid.T)).Int(int64(v.Grid.H)).Int(int64(v.Grid.W)).Float32s(v.Pixels)
		}
	}
	return h.Key()
}

// VisionKey is the cache key of one vision block's features.
func (m *Model) VisionKey(pixels []float32, g Grid, precision compute.DType) condcache.Key {
	return condcache.NewHasher(visionKind).String(m.identity).String(precision.String()).
		Int(int64(g.T)).Int(int64(g.H)).Int(int64(g.W)).Float32s(pixels).Key()
}

func hostTensor(name string, t *compute.Tensor) (condcache.Tensor, error) {
	raw := make([]byte, t.Bytes())
	if err := t.Backend().Download(raw, t); err != nil {
		return condcache.Tensor{}, err
	}
	return condcache.Tensor{Name: name, DType: t.DType(), Shape: t.Shape(), Data: raw}, nil
}

func deviceTensor(b compute.Backend, ct condcache.Tensor) (*compute.Tensor, error) {
	t, err := b.Alloc(ct.DType, ct.Shape...)
	if err != nil {
		return nil, err
	}
	if err := b.Upload(t, ct.Data); err != nil {
		b.Free(t)
		return nil, err
	}
	return t, nil
}

func outputEntry(o *Output) (*condcache.Entry, error) {
	h, err := hostTensor("hidden", o.Hidden)
	if err != nil {
		return nil, err
	}
	L := len(o.Tags)
	pos := make([]int64, 0, 3*L)
	for a := 0; a < 3; a++ {
		pos = append(pos, o.Positions[a]...)
	}
	return &condcache.Entry{Tensors: []condcache.Tensor{h,
		{Name: "tags", DType: compute.I64, Shape: compute.Shape{L}, Data: compute.EncodeInt64(compute.I64, o.Tags)},
		{Name: "positions", DType: compute.I64, Shape: compute.Shape{3, L}, Data: compute.EncodeInt64(compute.I64, pos)},
	}}, nil
}

func outputFromEntry(b compute.Backend, e *condcache.Entry) (*Output, error) {
	ht, ok1 := e.Tensor("hidden")
	tt, ok2 := e.Tensor("tags")
	pt, ok3 := e.Tensor("positions")
	if !ok1 || !ok2 || !ok3 || len(ht.Shape) != 2 || tt.DType != compute.I64 || pt.DType != compute.I64 ||
		tt.Shape.NumElements() != ht.Shape[0] || pt.Shape.NumElements() != 3*ht.Shape[0] {
		return nil, fmt.Errorf("qwen3vl: malformed cache entry")
	}
	h, err := deviceTensor(b, ht)
	if err != nil {
		return nil, err
	}
	L := ht.Shape[0]
	pos := compute.DecodeInt64(compute.I64, pt.Data)
	out := &Output{Hidden: h, Tags: compute.DecodeInt64(compute.I64, tt.Data), Cached: true}
	for a := 0; a < 3; a++ {
		out.Positions[a] = pos[a*L : (a+1)*L]
	}
	return out, nil
}

func visionEntry(v *VisionOutput) (*condcache.Entry, error) {
	e := &condcache.Entry{}
	m, err := hostTensor("merged", v.Merged)
	if err != nil {
		return nil, err
	}
	e.Tensors = append(e.Tensors, m)
	for k, d := range v.Deepstack {
		t, err := hostTensor("deepstack"+strconv.Itoa(k), d)
		if err != nil {
			return nil, err
		}
		e.Tensors = append(e.Tensors, t)
	}
	return e, nil
}

func visionFromEntry(b compute.Backend, e *condcache.Entry, deep int) (*VisionOutput, error) {
	names := []string{"merged"}
	for k := 0; k < deep; k++ {
		names = append(names, "deepstack"+strconv.Itoa(k))
	}
	out := &VisionOutput{}
	for i, n := range names {
		ct, ok := e.Tensor(n)
		if !ok {
			out.Free(b)
			return nil, fmt.Errorf("qwen3vl: cache entry lacks %s", n)
		}
		t, err := deviceTensor(b, ct)
		if err != nil {
			out.Free(b)
			return nil, err
		}
		if i == 0 {
			out.Merged = t
		} else {
			out.Deepstack = append(out.Deepstack, t)
		}
	}
	return out, nil
}
