package dit

import (
	"sort"
	"strings"

	"h3studio/engine/compute"
	"h3studio/engine/safetensors"
)

// PlanningSource returns a data-less safetensors.Source with the tensor
// inventory of a checkpoint of configuration c in layout l (BF16 except the
// float32 modules of the release: patch projections, time MLP, heads and
// rope.inv_freq). Data returns nil, so a Binder allocates storage without
// contents: Open and every phase run on it unchanged, for planning on a
// backend that computes nothing (engine/compute/meta).
func PlanningSource(c Config, l WeightLayout) safetensors.Source {
	n := names{l}
	f32 := []string{n.videoIn() + ".", n.audioIn() + ".", "time_embedder.", n.videoOut() + ".", n.audioOut() + ".", n.ropeInvFreq()}
	src := &planningSource{info: map[string]safetensors.TensorInfo{}}
	var off int64
	for _, s := range n.inventory(c) {
		dt := compute.BF16
		for _, p := range f32 {
			if strings.HasPrefix(s.name, p) {
				dt = compute.F32
			}
		}
		size := int64(compute.Shape(s.shape).NumElements()) * int64(dt.Size())
		src.info[s.name] = safetensors.TensorInfo{Name: s.name, DType: dt, Shape: compute.Shape(s.shape), Begin: off, End: off + size}
		src.names = append(src.names, s.name)
		off += size
	}
	sort.Strings(src.names)
	return src
}

type planningSource struct {
	info  map[string]safetensors.TensorInfo
	names []string
}

func (p *planningSource) Info(name string) (safetensors.TensorInfo, bool) {
	i, ok := p.info[name]
	return i, ok
}

func (p *planningSource) Data(string) ([]byte, error) { return nil, nil }

func (p *planningSource) Names() []string { return append([]string(nil), p.names...) }
