package qwen3vl

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"

	"h3studio/engine/safetensors"
)

// layerStreamer reads decoder layers from the checkpoint files while the
// previous layer runs: one layer is being computed and at most one more is
// being read, into two reusable host buffers, so at most two decoder layers
// are resident at any time (h3.c's prefetch ring of depth 1). Bytes are read
// with ReadAt (pread), not through the memory mapping, so the resident set
// is exactly what the streamer holds.
type layerStreamer struct {
	m     *Model
	bufs  [2][]byte
	mu    sync.Mutex
	files map[string]*os.File
	stats *Stats
}

// fetched is one layer's bytes, read into a buffer.
type fetched struct {
	layer int
	data  map[string][]byte
	err   error
}

func newLayerStreamer(m *Model) *layerStreamer {
	return &layerStreamer{m: m, files: map[string]*os.File{}, stats: &m.stats}
}

func (s *layerStreamer) file(path string) (*os.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.files[path]; ok {
		return f, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	s.files[path] = f
	return f, nil
}

// close closes the files and drops the two layer buffers (two decoder
// layers: 1.8 GiB at the released width), so that they are garbage once the
// model is closed rather than held for as long as the Model is reachable.
func (s *layerStreamer) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.files {
		f.Close()
	}
	s.files = map[string]*os.File{}
	s.bufs = [2][]byte{}
}

// read loads layer i's tensors into buffer slot.
func (s *layerStreamer) read(i, slot int) fetched {
	specs := s.m.cfg.LayerSpecs(i)
	var total int64
	infos := make([]safetensors.TensorInfo, len(specs))
	for j, sp := range specs {
		info, ok := s.m.ck.Info(sp.Name)
		if !ok {
			return fetched{layer: i, err: fmt.Errorf("qwen3vl: layer %d: missing tensor %s", i, sp.Name)}
		}
		infos[j] = info
		total += align64(info.Bytes())
	}
	if int64(cap(s.bufs[slot])) < total {
		s.bufs[slot] = make([]byte, total)
	}
	buf := s.bufs[slot][:total]
	data := make(map[string][]byte, len(specs))
	var off int64
	for j, sp := range specs {
		info := infos[j]
		f, ok := s.m.ck.FileOf(sp.Name)
		if !ok {
			return fetched{layer: i, err: fmt.Errorf("qwen3vl: layer %d: no file holds %s", i, sp.Name)}
		}
		fh, err := s.file(f.Path)
		if err != nil {
			return fetched{layer: i, err: fmt.Errorf("qwen3vl: layer %d: %w", i, err)}
		}
		dst := buf[off : off+info.Bytes() : off+info.Bytes()]
		if _, err := fh.ReadAt(dst, info.Begin); err != nil {
			return fetched{layer: i, err: fmt.Errorf("qwen3vl: layer %d: read %s from %s: %w", i, sp.Name, f.Path, err)}
		}
		data[sp.Name] = dst
		off += align64(info.Bytes())
	}
	s.stats.addRead(total)
	return fetched{layer: i, data: data}
}

func align64(n int64) int64 { return (n + 63) &^ 63 }

// run executes fn for layers 0..n−1 with streamed weights: layer i+1 is
// read on another goroutine while fn runs layer i.
func (s *layerStreamer) run(ctx context.Context, n int, fn func(l *layerWeights)) error {
	if n == 0 {
		return nil
	}
	start := func(i int) chan fetched {
		ch := make(chan fetched, 1)
		s.stats.layerIn()
		go func() { ch <- s.read(i, i%2) }()
		return ch
	}
	pending := start(0)
	defer func() {
		if pending != nil { // drain a read still in flight (error or panic path)
			<-pending
			s.stats.layerOut()
		}
	}()
	for i := 0; i < n; i++ {
		f := <-pending
		pending = nil
		if f.err != nil {
			s.stats.layerOut()
			return f.err
		}
		src := &bytesSource{ck: s.m.ck, data: f.data}
		w := safetensors.NewBinder("qwen3vl", src, s.m.b)
		lw := bindLayer(w, s.m.cfg, i)
		if err := w.Err(); err != nil {
			s.m.b.Free(lw.tensors...)
			s.stats.layerOut()
			return err
		}
		if i+1 < n {
			pending = start(i + 1)
		}
		err := func() (err error) {
			defer func() {
				s.m.b.Free(lw.tensors...)
				s.stats.layerOut()
			}()
			if err := ctx.Err(); err != nil {
				return err
			}
			fn(lw)
			return s.m.b.Sync(ctx)
		}()
		if err != nil {
			return err
		}
	}
	return nil
}

// bytesSource serves one layer's freshly read bytes under the checkpoint's
// names and descriptions.
type bytesSource struct {
	ck   *safetensors.Checkpoint
	data map[string][]byte
}

func (s *bytesSource) Info(name string) (safetensors.TensorInfo, bool) {
	if _, ok := s.data[name]; !ok {
		return safetensors.TensorInfo{}, false
	}
	return s.ck.Info(name)
}

func (s *bytesSource) Data(name string) ([]byte, error) {
	d, ok := s.data[name]
	if !ok {
		return nil, fmt.Errorf("qwen3vl: %s was not streamed", name)
	}
	return d, nil
}

func (s *bytesSource) Names() []string {
	out := make([]string, 0, len(s.data))
	for n := range s.data {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Stats count the encoder's work; they prove what ran (tests and the
// conditioning cache use them).
type Stats struct {
	mu sync.Mutex
	// Encodes counts language-model forwards; VisionBlocks counts vision
	// tower forwards (one per image or video frame pair).
	Encodes, VisionBlocks int64
	// LayersRun counts decoder layer forwards.
	LayersRun int64
	// BytesStreamed is the weight bytes read from disk by the streamer.
	BytesStreamed int64
	// ResidentLayers is the number of streamed layers currently held;
	// MaxResidentLayers its high-water mark.
	ResidentLayers, MaxResidentLayers int
}

func (s *Stats) addRead(n int64) {
	s.mu.Lock()
	s.BytesStreamed += n
	s.mu.Unlock()
}

func (s *Stats) layerIn() {
	s.mu.Lock()
	s.ResidentLayers++
	s.MaxResidentLayers = max(s.MaxResidentLayers, s.ResidentLayers)
	s.mu.Unlock()
}

func (s *Stats) layerOut() {
	s.mu.Lock()
	s.ResidentLayers--
	s.mu.Unlock()
}

func (s *Stats) add(f func(s *Stats)) {
	s.mu.Lock()
	f(s)
	s.mu.Unlock()
}

// Snapshot returns a copy of the counters.
func (s *Stats) Snapshot() StatsSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return StatsSnapshot{Encodes: s.Encodes, VisionBlocks: s.VisionBlocks, LayersRun: s.LayersRun,
		BytesStreamed: s.BytesStreamed, ResidentLayers: s.ResidentLayers, MaxResidentLayers: s.MaxResidentLayers}
}

// StatsSnapshot is a copy of Stats.
type StatsSnapshot struct {
	Encodes, VisionBlocks, LayersRun  int64
	BytesStreamed                     int64
	ResidentLayers, MaxResidentLayers int
}

var _ safetensors.Source = (*bytesSource)(nil)
