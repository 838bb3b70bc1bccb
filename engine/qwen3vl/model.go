package qwen3vl

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"h3studio/engine/compute"
	"h3studio/engine/condcache"
	"h3studio/engine/nn"
	"h3studio/engine/safetensors"
)

// Options configure Open. The zero value (or nil) is the resident mode
// running Config.TapLayers() layers.
type Options struct {
	// Residency is how the decoder layers are held: compute.Resident binds
	// every used layer at Load and keeps it; compute.Streaming reads each
	// layer from disk when it runs (the next one is read while the current
	// one computes; at most two are held) and binds the vision tower only
	// while vision inputs are encoded.
	Residency compute.Residency
	// Layers is the number of decoder layers to run (0: Config.TapLayers();
	// 50 for the release).
	Layers int
}

// Model is a loaded text encoder: the Qwen3-VL language model up to the tap
// and the vision tower. It is not safe for concurrent use.
type Model struct {
	cfg       *Config
	processor ProcessorConfig
	ck        *safetensors.Checkpoint
	b         compute.Backend
	residency compute.Residency
	layers    int
	resident  []*layerWeights
	vision    *VisionTower // resident mode; nil when streaming
	streamer  *layerStreamer
	identity  string
	stats     Stats
}

// Open reads the text encoder's config.json and optional preprocessor
// configs in configDir, maps the safetensors shards in weightsDir (a
// snapshot.Component's ConfigDir and Dir, the same folder in both layouts),
// validates the config and accounts for every tensor strictly: the
// embedding, the decoder layers below the tap and the vision tower must be
// present with their shapes; layers past the tap, the final norm and lm_head
// are the only tensors allowed to stay unused. nil options are the
// defaults.
//
// There is no Load over a caller's Binder: streaming reads each layer from
// the checkpoint's files, and the model's Identity hashes them, so the model
// owns its checkpoint.
func Open(b compute.Backend, configDir, weightsDir string, o *Options) (m *Model, err error) {
	defer compute.Recover(&err)
	if o == nil {
		o = &Options{}
	}
	cfg, err := ReadConfig(configDir)
	if err != nil {
		return nil, err
	}
	pc, err := ReadProcessorConfig(configDir, cfg)
	if err != nil {
		return nil, err
	}
	layers := o.Layers
	if layers == 0 {
		layers = cfg.TapLayers()
	}
	if layers < len(cfg.Vision.DeepstackIndexes) || layers > cfg.Text.NumLayers {
		return nil, fmt.Errorf("qwen3vl: %d decoder layers requested; the model has %d and needs at least %d for deepstack",
			layers, cfg.Text.NumLayers, len(cfg.Vision.DeepstackIndexes))
	}
	ck, err := safetensors.OpenDir(weightsDir)
	if err != nil {
		return nil, fmt.Errorf("qwen3vl: %w", err)
	}
	m = &Model{cfg: cfg, processor: pc, ck: ck, b: b, residency: o.Residency, layers: layers}
	defer func() {
		if err != nil {
			m.Close()
			m = nil
		}
	}()
	w := safetensors.NewBinder("qwen3vl", ck, b)
	checkSpecs(w, []WeightSpec{cfg.EmbedSpec()})
	if o.Residency == compute.Streaming {
		checkSpecs(w, cfg.VisionSpecs())
		for i := 0; i < layers; i++ {
			checkSpecs(w, cfg.LayerSpecs(i))
		}
		m.streamer = newLayerStreamer(m)
	} else {
		m.vision = loadVision(w, cfg)
		for i := 0; i < layers; i++ {
			m.resident = append(m.resident, bindLayer(w, cfg, i))
		}
	}
	if err := w.Finish(cfg.UnusedPrefixes(layers)...); err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, weightsDir)
	}
	if m.identity, err = checkpointIdentity(configDir, ck); err != nil {
		return nil, err
	}
	return m, nil
}

// checkSpecs validates tensors without binding them (streaming mode binds
// them when they run) and marks them used.
func checkSpecs(w *safetensors.Binder, specs []WeightSpec) {
	for _, s := range specs {
		info, ok := w.Info(s.Name)
		switch {
		case !ok:
			w.Fail("missing tensor %s", s.Name)
		case !info.Shape.Equal(s.Shape):
			w.Fail("%s: want shape %v, have %s%v", s.Name, s.Shape, info.DType, info.Shape)
		case !info.DType.IsFloat() || info.DType == compute.F64:
			w.Fail("%s: dtype %s is not a supported weight type (BF16, F16, F32)", s.Name, info.DType)
		default:
			w.Skip(s.Name)
		}
	}
}

// checkpointIdentity hashes what identifies the weights without reading
// them: config.json, and per shard its name, size, modification time and
// safetensors header.
func checkpointIdentity(dir string, ck *safetensors.Checkpoint) (string, error) {
	h := sha256.New()
	cfg, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return "", fmt.Errorf("qwen3vl: %w", err)
	}
	h.Write(cfg)
	files := append([]*safetensors.File(nil), ck.Files...)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	for _, f := range files {
		st, err := os.Stat(f.Path)
		if err != nil {
			return "", fmt.Errorf("qwen3vl: %w", err)
		}
		fmt.Fprintf(h, "\x00%s\x00%d\x00%d\x00", filepath.Base(f.Path), st.Size(), st.ModTime().UnixNano())
		fh, err := os.Open(f.Path)
		if err != nil {
			return "", fmt.Errorf("qwen3vl: %w", err)
		}
		_, err = io.CopyN(h, fh, f.Header.DataStart)
		fh.Close()
		if err != nil {
			return "", fmt.Errorf("qwen3vl: %s: %w", f.Path, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Close releases the weights and files.
func (m *Model) Close() error {
	if m == nil {
		return nil
	}
	for _, l := range m.resident {
		m.b.Free(l.tensors...)
	}
	m.resident = nil
	if m.vision != nil {
		m.vision.free(m.b)
		m.vision = nil
	}
	if m.streamer != nil {
		m.streamer.close()
	}
	if m.ck != nil {
		err := m.ck.Close()
		m.ck = nil
		return err
	}
	return nil
}

// Config is the model's configuration.
func (m *Model) Config() *Config { return m.cfg }

// Processor is the preprocessor configuration read with the model.
func (m *Model) Processor() ProcessorConfig { return m.processor }

// Layers is the number of decoder layers Encode runs.
func (m *Model) Layers() int { return m.layers }

// Residency is how the decoder layers are held (Options.Residency).
func (m *Model) Residency() compute.Residency { return m.residency }

// Identity is a hash identifying the checkpoint (config, shard headers,
// sizes and modification times) for cache keys.
func (m *Model) Identity() string { return m.identity }

// Stats returns a copy of the work counters.
func (m *Model) Stats() StatsSnapshot { return m.stats.Snapshot() }

// Input is one text-encoder request: the presentation's token ids and the
// preprocessed vision inputs whose pad runs appear in it.
type Input struct {
	IDs []int64
	// Images are the image inputs in the order of their <|image_pad|>
	// runs; Videos the videos in the order of their <|video_pad|> runs
	// (each temporal patch of a video is one run).
	Images, Videos []VisionInput
}

// VisionInput is one preprocessed image or video: Pixels holds
// Grid.Patches() rows of Config.PatchInputs() values in the processor's
// order (temporal patch, merge blocks, patches; channel-major patch
// vectors).
type VisionInput struct {
	Pixels []float32
	Grid   Grid
}

// EncodeOptions configure one Encode call.
type EncodeOptions struct {
	// Precision is the activation dtype: compute.BF16 (the released
	// precision; the default) or compute.F32.
	Precision compute.DType
	// Trace, when set, receives intermediates by name while they are
	// valid: "vision.patch_embed", "vision.embed_plus_pos",
	// "vision.rope_cos|sin", "vision.block{j}", "vision.deepstack{k}",
	// "vision.merged" (once per vision block), "embed", "rope_cos|sin",
	// "layer0.{input_layernorm,q_norm,k_norm,self_attn,
	// post_attention_layernorm,mlp}", "layer{i}.pre_deepstack",
	// "layer{i}", "hidden".
	Trace func(name string, t *compute.Tensor)
	// Cache, when set, is consulted first: a request whose conditioning is
	// cached (same model, layers, precision, token ids and vision pixels)
	// skips the encoder entirely, and vision blocks already encoded (same
	// pixels) skip the vision tower. Results are stored into it. Tracing
	// bypasses the cache.
	Cache *condcache.Cache
}

// Output is the conditioning of one Encode call.
type Output struct {
	// Hidden is the unnormalized residual stream after the last run layer,
	// [L, hidden] in the requested precision, owned by the caller.
	Hidden *compute.Tensor
	// Tags are the DiT modality tags of the rows (1 text, 0 vision block).
	Tags []int64
	// Positions are the M-RoPE positions used (t, h, w rows).
	Positions [3][]int64
	// Cached is set when the result came from EncodeOptions.Cache.
	Cached bool
}

// InputError reports a request the encoder cannot run, naming the field.
type InputError struct {
	Field string
	Msg   string
}

func (e *InputError) Error() string { return "qwen3vl: " + e.Field + ": " + e.Msg }

// ErrEmpty means a request has no tokens.
var ErrEmpty = errors.New("qwen3vl: empty token sequence")

// validate checks an input against the config and returns its vision runs.
func (m *Model) validate(in *Input) ([]VisionRun, error) {
	c := m.cfg
	if len(in.IDs) == 0 {
		return nil, ErrEmpty
	}
	if max := c.Text.MaxPositions; max > 0 && len(in.IDs) > max {
		return nil, &InputError{"ids", fmt.Sprintf("%d tokens exceed the model's %d positions", len(in.IDs), max)}
	}
	for i, id := range in.IDs {
		if id < 0 || id >= int64(c.Text.VocabSize) {
			return nil, &InputError{"ids", fmt.Sprintf("token %d: id %d outside the vocabulary [0, %d)", i, id, c.Text.VocabSize)}
		}
	}
	mrg := c.Vision.SpatialMergeSize
	for _, set := range []struct {
		name string
		v    []VisionInput
	}{{"images", in.Images}, {"videos", in.Videos}} {
		for i, v := range set.v {
			g := v.Grid
			if g.T < 1 || g.H < mrg || g.W < mrg || g.H%mrg != 0 || g.W%mrg != 0 {
				return nil, &InputError{fmt.Sprintf("%s[%d]", set.name, i), fmt.Sprintf("grid %v: need t ≥ 1 and h, w positive multiples of %d", g, mrg)}
			}
			if want := g.Patches() * c.PatchInputs(); len(v.Pixels) != want {
				return nil, &InputError{fmt.Sprintf("%s[%d]", set.name, i), fmt.Sprintf("%d pixel values, grid %v needs %d", len(v.Pixels), g, want)}
			}
		}
	}
	grids := func(v []VisionInput) []Grid {
		out := make([]Grid, len(v))
		for i := range v {
			out[i] = v[i].Grid
		}
		return out
	}
	return c.VisionRuns(in.IDs, grids(in.Images), grids(in.Videos))
}

// Encode runs the text encoder: vision blocks, embedding with the merged
// vision tokens spliced in, the decoder layers with deepstack injection
// after the first layers, and returns the residual stream after the last
// layer (hidden_states[Layers()] of the reference, no final norm).
// Mirrors transformers' Qwen3VLModel.forward as diffusers'
// get_qwen3vl_prompt_embeds calls it.
func (m *Model) Encode(ctx context.Context, in *Input, o EncodeOptions) (out *Output, err error) {
	defer compute.Recover(&err)
	if ctx == nil {
		ctx = context.Background()
	}
	act := o.Precision
	if act == compute.Invalid {
		act = compute.BF16
	}
	if act != compute.BF16 && act != compute.F32 {
		return nil, fmt.Errorf("qwen3vl: precision %v is not supported (BF16 or F32)", act)
	}
	runs, err := m.validate(in)
	if err != nil {
		return nil, err
	}
	c, b := m.cfg, m.b
	tr := tracer{b: b, fn: o.Trace}
	cache := o.Cache
	if tr.on() {
		cache = nil // tracing wants the intermediates
	}
	var textKey condcache.Key
	if cache != nil {
		textKey = m.TextKey(in, act)
		if e, ok := cache.Get(textKey); ok {
			if out, err := outputFromEntry(b, e); err == nil {
				return out, nil
			}
		}
	}
	L := len(in.IDs)
	pos := c.PositionIDs(in.IDs, runs)
	a := nn.NewArena(b)
	defer a.Release()

	// Vision blocks, in sequence order.
	vis := make([]*VisionOutput, len(runs))
	defer func() {
		for _, v := range vis {
			v.Free(b)
		}
	}()
	if len(runs) > 0 {
		vt := m.vision
		var release func()
		tower := func() (*VisionTower, error) {
			if vt != nil {
				return vt, nil
			}
			// streaming: bind the tower only for the vision phase
			w := safetensors.NewBinder("qwen3vl", m.ck, b)
			vt = loadVision(w, c)
			release = sync.OnceFunc(func() { vt.free(b) })
			if err := w.Err(); err != nil {
				release()
				return nil, err
			}
			return vt, nil
		}
		defer func() {
			if release != nil {
				release()
			}
		}()
		rowLen := c.PatchInputs()
		for r, run := range runs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			src := in.Images
			if run.Video {
				src = in.Videos
			}
			n := run.Grid.Patches() * rowLen
			px := src[run.Input].Pixels[run.Block*n : (run.Block+1)*n]
			var key condcache.Key
			if cache != nil {
				key = m.VisionKey(px, run.Grid, act)
				if e, ok := cache.Get(key); ok {
					if v, err := visionFromEntry(b, e, len(c.Vision.DeepstackIndexes)); err == nil {
						vis[r] = v
						continue
					}
				}
			}
			t, err := tower()
			if err != nil {
				return nil, err
			}
			vis[r] = t.forward(b, px, run.Grid, act, tr)
			m.stats.add(func(s *Stats) { s.VisionBlocks++ })
			if cache != nil {
				if e, err := visionEntry(vis[r]); err == nil {
					cache.Put(key, e)
				}
			}
		}
		if release != nil {
			release()
		}
	}

	// Embedding (host gather of the used rows) and vision splice.
	h := a.New(act, L, c.Text.HiddenSize)
	if err := m.embed(h, in.IDs); err != nil {
		return nil, err
	}
	ws := newTextWorkspace(a, c, L, act)
	half := c.Text.HeadDim / 2
	cosH, sinH := TextRopeTables(c, pos)
	upload(b, ws.cos, cosH)
	upload(b, ws.sin, sinH)
	if len(runs) > 0 {
		var idx []int64
		for _, r := range runs {
			for i := 0; i < r.Len; i++ {
				idx = append(idx, int64(r.Start+i))
			}
		}
		P := len(idx)
		ws.padIdx = a.New(compute.I64, P)
		if err := b.Upload(ws.padIdx, compute.EncodeInt64(compute.I64, idx)); err != nil {
			return nil, err
		}
		ws.padRows = a.New(act, P, c.Text.HiddenSize)
		for range c.Vision.DeepstackIndexes {
			ws.deepstack = append(ws.deepstack, a.New(act, P, c.Text.HiddenSize))
		}
		off := 0
		for r, run := range runs {
			b.ScatterRows(h, vis[r].Merged, ws.padIdx.Rows(off, off+run.Len))
			for k := range ws.deepstack {
				b.Copy(ws.deepstack[k].Rows(off, off+run.Len), vis[r].Deepstack[k])
			}
			vis[r].Free(b)
			vis[r] = nil
			off += run.Len
		}
	}
	tr.put("embed", h)

	if tr.on() {
		for _, t := range []struct {
			name string
			v    []float32
		}{{"rope_cos", cosH}, {"rope_sin", sinH}} {
			full := nn.DuplicateHalves(t.v, half)
			for i := range full {
				full[i] = compute.Round(act, full[i])
			}
			tr.putHost(t.name, full, L, 2*half)
		}
	}

	step := func(l *layerWeights) {
		l.forward(b, c, h, ws, tr)
		m.stats.add(func(s *Stats) { s.LayersRun++ })
	}
	if m.residency == compute.Streaming {
		if err := m.streamer.run(ctx, m.layers, step); err != nil {
			return nil, err
		}
	} else {
		for _, l := range m.resident {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			step(l)
		}
	}
	if err := b.Sync(ctx); err != nil {
		return nil, err
	}
	tr.put("hidden", h)
	m.stats.add(func(s *Stats) { s.Encodes++ })
	out = &Output{Hidden: a.Keep(h), Tags: c.Tags(in.IDs), Positions: pos}
	if cache != nil {
		if e, err := outputEntry(out); err == nil {
			cache.Put(textKey, e)
		}
	}
	return out, nil
}

// embed fills h [L, hidden] with the embedding rows of ids, read from the
// mapped table on the host (only the used rows are touched; the 1.5 GB
// released table is never loaded).
func (m *Model) embed(h *compute.Tensor, ids []int64) error {
	spec := m.cfg.EmbedSpec()
	info, ok := m.ck.Info(spec.Name)
	if !ok {
		return fmt.Errorf("qwen3vl: missing tensor %s", spec.Name)
	}
	data, err := m.ck.Data(spec.Name)
	if err != nil {
		return fmt.Errorf("qwen3vl: %w", err)
	}
	row := int64(m.cfg.Text.HiddenSize) * int64(info.DType.Size())
	host := make([]byte, int64(len(ids))*row)
	for i, id := range ids {
		copy(host[int64(i)*row:], data[id*row:(id+1)*row])
	}
	if info.DType == h.DType() {
		return m.b.Upload(h, host)
	}
	t, err := m.b.Alloc(info.DType, h.Shape()...)
	if err != nil {
		return err
	}
	defer m.b.Free(t)
	if err := m.b.Upload(t, host); err != nil {
		return err
	}
	m.b.Copy(h, t)
	return nil
}

// free releases the tower's bound tensors.
func (vt *VisionTower) free(b compute.Backend) {
	if vt == nil {
		return
	}
	b.Free(vt.tensors()...)
}

// tensors lists every bound tensor of the tower.
func (vt *VisionTower) tensors() []*compute.Tensor {
	out := []*compute.Tensor{vt.patch.W, vt.patch.B}
	for _, bl := range vt.blocks {
		out = append(out, bl.norm1.W, bl.norm1.B, bl.norm2.W, bl.norm2.B, bl.qkv.W, bl.qkv.B, bl.proj.W, bl.proj.B)
		out = append(out, bl.mlp.Tensors()...)
	}
	for _, pm := range append(append([]patchMerger(nil), vt.deep...), vt.merger) {
		out = append(out, pm.norm.Tensors()...)
		out = append(out, pm.mlp.Tensors()...)
	}
	return out
}
