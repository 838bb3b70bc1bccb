package qwen3vl

import (
	"errors"

	"h3studio/engine/compute"
	"h3studio/engine/condcache"
)

// CacheEntry is the output as a conditioning-cache entry: the hidden
// states ("hidden") and the rows' tags ("tags").
func (o *Output) CacheEntry() (*condcache.Entry, error) {
	raw := make([]byte, o.Hidden.Bytes())
	if err := o.Hidden.Backend().Download(raw, o.Hidden); err != nil {
		return nil, err
	}
	return &condcache.Entry{Tensors: []condcache.Tensor{
		{Name: "hidden", DType: o.Hidden.DType(), Shape: o.Hidden.Shape().Clone(), Data: raw},
		{Name: "tags", DType: compute.I64, Shape: compute.Shape{len(o.Tags)}, Data: compute.EncodeInt64(compute.I64, o.Tags)},
	}}, nil
}

// FromCacheEntry uploads a CacheEntry's hidden states to b (the caller owns
// the tensor) and returns them with the rows' tags.
func FromCacheEntry(b compute.Backend, e *condcache.Entry) (*compute.Tensor, []int64, error) {
	h, ok1 := e.Tensor("hidden")
	tg, ok2 := e.Tensor("tags")
	if !ok1 || !ok2 {
		return nil, nil, errors.New("engine: conditioning cache entry is incomplete")
	}
	t, err := b.Alloc(h.DType, h.Shape...)
	if err != nil {
		return nil, nil, err
	}
	if err := b.Upload(t, h.Data); err != nil {
		b.Free(t)
		return nil, nil, err
	}
	return t, compute.DecodeInt64(tg.DType, tg.Data), nil
}
