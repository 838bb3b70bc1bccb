package lora

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/dit"
	"h3studio/engine/safetensors"
	"h3studio/engine/testkit"
)

// tinyConfig is a transformer small enough to write every format of a
// LoRA for all of its modules: 2 heads × 4 (Inner 8), hidden 8, FFN 6.
func tinyConfig() dit.Config {
	return dit.Config{HiddenSize: 8, NumLayers: 2, RefinerLayers: 1, Heads: 2, HeadDim: 4, FFNDim: 6, TimeEmbedDim: 5}
}

// mat is a float64 row-major matrix.
type mat struct {
	r, c int
	v    []float64
}

func newMat(r, c int) mat { return mat{r, c, make([]float64, r*c)} }

func randMat(rng *rand.Rand, r, c int) mat {
	m := newMat(r, c)
	for i := range m.v {
		m.v[i] = rng.NormFloat64()
	}
	return m
}

func (m mat) mul(o mat) mat {
	p := newMat(m.r, o.c)
	for i := 0; i < m.r; i++ {
		for k := 0; k < m.c; k++ {
			for j := 0; j < o.c; j++ {
				p.v[i*o.c+j] += m.v[i*m.c+k] * o.v[k*o.c+j]
			}
		}
	}
	return p
}

func (m mat) scale(s float64) mat {
	p := newMat(m.r, m.c)
	for i, x := range m.v {
		p.v[i] = x * s
	}
	return p
}

// rows stacks the given rows of m (row i of the result is m's row idx[i]).
func (m mat) rows(idx []int) mat {
	p := newMat(len(idx), m.c)
	for i, r := range idx {
		copy(p.v[i*m.c:(i+1)*m.c], m.v[r*m.c:(r+1)*m.c])
	}
	return p
}

func vstack(ms ...mat) mat {
	p := mat{c: ms[0].c}
	for _, m := range ms {
		p.r += m.r
		p.v = append(p.v, m.v...)
	}
	return p
}

func (m mat) entry(name string) safetensors.Entry {
	v := make([]float32, len(m.v))
	for i, x := range m.v {
		v[i] = float32(x)
	}
	return safetensors.F32(name, compute.F32, compute.Shape{m.r, m.c}, v)
}

// truth is one canonical low-rank update per site: A and the B of each part.
type truth struct {
	site dit.Site
	a    mat
	b    []mat // per part: [out_c, r]
}

func (t truth) delta(c int) mat { return t.b[c].mul(t.a) }

// whole is B of all parts stacked in the canonical order ([q; k; v], fc1
// [gate; value]).
func (t truth) whole() mat { return vstack(t.b...) }

func truths(cfg dit.Config, rank int, seed uint64) []truth {
	rng := rand.New(rand.NewPCG(seed, 3))
	var out []truth
	add := func(s dit.Site) {
		parts, in, err := cfg.SiteShape(s)
		if err != nil {
			panic(err)
		}
		t := truth{site: s, a: randMat(rng, rank, in)}
		for _, o := range parts {
			t.b = append(t.b, randMat(rng, o, rank))
		}
		out = append(out, t)
	}
	for i := 0; i < cfg.NumLayers; i++ {
		for _, p := range []dit.Proj{dit.ProjQKV, dit.ProjOut, dit.ProjFC1, dit.ProjFC2, dit.ProjAdaLN} {
			add(dit.Site{Stack: dit.StackBlocks, Block: i, Proj: p})
		}
	}
	for i := 0; i < cfg.RefinerLayers; i++ {
		for _, p := range []dit.Proj{dit.ProjQKV, dit.ProjOut, dit.ProjFC1, dit.ProjFC2} {
			add(dit.Site{Stack: dit.StackRefiner, Block: i, Proj: p})
		}
	}
	add(dit.Site{Stack: dit.StackFinal, Proj: dit.ProjAdaLN})
	return out
}

// interleave maps the contiguous [q; k; v] rows to the release's per-head
// order: row h·3D + c·D + d holds part c, head h, channel d.
func interleave(cfg dit.Config, m mat) mat {
	I, D := cfg.Inner(), cfg.HeadDim
	idx := make([]int, 3*I)
	for h := 0; h < cfg.Heads; h++ {
		for c := 0; c < 3; c++ {
			for d := 0; d < D; d++ {
				idx[h*3*D+c*D+d] = c*I + h*D + d
			}
		}
	}
	return m.rows(idx)
}

func swapHalvesMat(m mat) mat { return m.rows(swapHalves(m.r)) }

// names spells the module of site s in release or diffusers names.
func moduleName(s dit.Site, diffusers bool, part int) string {
	if !diffusers {
		return s.String()
	}
	var p string
	switch s.Stack {
	case dit.StackBlocks:
		p = fmt.Sprintf("transformer_blocks.%d.", s.Block)
	case dit.StackRefiner:
		p = fmt.Sprintf("token_refiner.refiner_blocks.%d.", s.Block)
	case dit.StackFinal:
		return "norm_out.linear"
	}
	switch s.Proj {
	case dit.ProjQKV:
		return p + []string{"attn.to_q", "attn.to_k", "attn.to_v"}[part]
	case dit.ProjOut:
		return p + "attn.to_out.0"
	case dit.ProjFC1:
		return p + "ff.net.0.proj"
	case dit.ProjFC2:
		return p + "ff.net.2"
	}
	return p + "adaln_proj.linear"
}

// format writes the truths as one key format.
type format struct {
	name  string
	write func(cfg dit.Config, ts []truth) ([]safetensors.Entry, map[string]string)
}

func lowRankEntries(prefix, a, b string, diffusers, interleaved bool, bScale float64, alpha float64) func(cfg dit.Config, ts []truth) ([]safetensors.Entry, map[string]string) {
	return func(cfg dit.Config, ts []truth) ([]safetensors.Entry, map[string]string) {
		var es []safetensors.Entry
		emit := func(mod string, A, B mat) {
			es = append(es, A.entry(prefix+mod+a), B.scale(bScale).entry(prefix+mod+b))
			if alpha > 0 {
				es = append(es, safetensors.F32(prefix+mod+".alpha", compute.F32, compute.Shape{}, []float32{float32(alpha)}))
			}
		}
		for _, t := range ts {
			switch {
			case t.site.Proj == dit.ProjQKV && diffusers:
				for c := 0; c < 3; c++ {
					emit(moduleName(t.site, true, c), t.a, t.b[c])
				}
			case t.site.Proj == dit.ProjQKV && interleaved:
				emit(moduleName(t.site, false, 0), t.a, interleave(cfg, t.whole()))
			case t.site.Proj == dit.ProjFC1 && diffusers:
				emit(moduleName(t.site, true, 0), t.a, swapHalvesMat(t.whole()))
			default:
				emit(moduleName(t.site, diffusers, 0), t.a, t.whole())
			}
		}
		return es, nil
	}
}

// kohyaName is the underscore spelling of a dotted module.
func kohyaName(mod string) string { return "lora_unet_" + strings.ReplaceAll(mod, ".", "_") }

var formats = []format{
	{"peft", lowRankEntries("", ".lora_A.weight", ".lora_B.weight", true, false, 1, 0)},
	{"peft-default-transformer", lowRankEntries("transformer.", ".lora_A.default.weight", ".lora_B.default.weight", true, false, 1, 0)},
	{"release", lowRankEntries("", ".lora_A.weight", ".lora_B.weight", false, true, 1, 0)},
	{"comfyui", lowRankEntries("diffusion_model.", ".lora_A.weight", ".lora_B.weight", false, false, 1, 0)},
	// alpha 2·rank with lora_B halved: the same delta.
	{"comfyui-kohya-dotted-alpha", lowRankEntries("diffusion_model.", ".lora_down.weight", ".lora_up.weight", false, false, 0.5, 6)},
	{"kohya", func(cfg dit.Config, ts []truth) ([]safetensors.Entry, map[string]string) {
		var es []safetensors.Entry
		for _, t := range ts {
			n := kohyaName(moduleName(t.site, false, 0))
			es = append(es, t.a.entry(n+".lora_down.weight"), t.whole().scale(0.25).entry(n+".lora_up.weight"),
				safetensors.F32(n+".alpha", compute.BF16, compute.Shape{}, []float32{12}))
		}
		return es, nil
	}},
	{"peft-metadata-alpha", func(cfg dit.Config, ts []truth) ([]safetensors.Entry, map[string]string) {
		es, _ := lowRankEntries("", ".lora_A.weight", ".lora_B.weight", true, false, 1.0/3, 0)(cfg, ts)
		return es, map[string]string{"alpha": "9"} // rank 3: scale 3
	}},
	{"diff", func(cfg dit.Config, ts []truth) ([]safetensors.Entry, map[string]string) {
		var es []safetensors.Entry
		for _, t := range ts {
			d := t.whole().mul(t.a)
			if t.site.Proj == dit.ProjQKV {
				d = interleave(cfg, d)
			}
			es = append(es, d.entry(moduleName(t.site, false, 0)+".diff"))
		}
		return es, nil
	}},
}

func writeLoRA(t *testing.T, name string, es []safetensors.Entry, meta map[string]string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name+".safetensors")
	if err := safetensors.Write(p, es, meta); err != nil {
		t.Fatal(err)
	}
	return p
}

// effective is Σ Scale·B[c]·A of an update list (Scale·B[c] for a full delta).
func effective(us []dit.Update, c, out, in int) mat {
	sum := newMat(out, in)
	for _, u := range us {
		if u.B[c].Empty() {
			continue
		}
		b := fromMatrix(u.B[c])
		d := b
		if !u.A.Empty() {
			d = b.mul(fromMatrix(u.A))
		}
		for i, x := range d.v {
			sum.v[i] += float64(u.Scale) * x
		}
	}
	return sum
}

func fromMatrix(m dit.Matrix) mat {
	v := m.Float32s()
	out := newMat(m.Rows, m.Cols)
	for i, x := range v {
		out.v[i] = float64(x)
	}
	return out
}

// TestFormatsRoundTrip writes one set of updates (every module of a tiny
// transformer, rank 3) in every key format and checks that each reads back
// to the same per-part deltas ΔW_c = s·B_c·A in the canonical order (q/k/v
// planar, fc1 [gate; value]). A skipped QKV permutation (interleaved or
// contiguous) or fc1 half swap lands rows on the wrong place and fails.
func TestFormatsRoundTrip(t *testing.T) {
	cfg := tinyConfig()
	ts := truths(cfg, 3, 1)
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			es, meta := f.write(cfg, ts)
			path := writeLoRA(t, f.name, es, meta)
			ad, applied, err := Load(cfg, []Use{{Path: path, Strength: 1}})
			if err != nil {
				t.Fatal(err)
			}
			if a := applied[0]; len(a.Unmatched)+len(a.Unknown) > 0 || a.Modules == 0 {
				t.Fatalf("applied %+v", a)
			}
			for _, tr := range ts {
				parts, in, _ := cfg.SiteShape(tr.site)
				for c, out := range parts {
					got := effective(ad[tr.site], c, out, in)
					if e := testkit.RelL2(got.v, tr.delta(c).v); !(e < 1e-6) {
						t.Errorf("%s part %d: rel error %.3g", tr.site, c, e)
					}
				}
			}
		})
	}
}

// TestPermutationsMatter: the QKV rows of a release-named LoRA are read as
// interleaved, of a ComfyUI one as contiguous, and the fc1 of a diffusers
// one as [value; gate]: reading the same bytes the other way gives a
// different (wrong) delta, so the round trip above would fail without the
// permutation.
func TestPermutationsMatter(t *testing.T) {
	cfg := tinyConfig()
	ts := truths(cfg, 3, 2)
	var qkv, fc1 truth
	for _, tr := range ts {
		if tr.site == (dit.Site{Stack: dit.StackBlocks, Block: 1, Proj: dit.ProjQKV}) {
			qkv = tr
		}
		if tr.site == (dit.Site{Stack: dit.StackBlocks, Block: 1, Proj: dit.ProjFC1}) {
			fc1 = tr
		}
	}
	contiguous := qkv.whole()
	for _, c := range []struct {
		name, key string
		b         mat
		want      bool
	}{
		{"comfyui contiguous", "diffusion_model.blocks.1.attn.qkv_proj", contiguous, true},
		{"contiguous read as interleaved", "blocks.1.attn.qkv_proj", contiguous, false},
		{"release interleaved", "blocks.1.attn.qkv_proj", interleave(cfg, contiguous), true},
		{"interleaved read as contiguous", "diffusion_model.blocks.1.attn.qkv_proj", interleave(cfg, contiguous), false},
	} {
		p := writeLoRA(t, "qkv", []safetensors.Entry{qkv.a.entry(c.key + ".lora_A.weight"), c.b.entry(c.key + ".lora_B.weight")}, nil)
		ad, _, err := Load(cfg, []Use{{Path: p, Strength: 1}})
		if err != nil {
			t.Fatal(err)
		}
		ok := true
		for part := 0; part < 3; part++ {
			got := effective(ad[qkv.site], part, cfg.Inner(), cfg.HiddenSize)
			ok = ok && testkit.RelL2(got.v, qkv.delta(part).v) < 1e-6
		}
		if ok != c.want {
			t.Errorf("%s: lands on the canonical rows = %v, want %v", c.name, ok, c.want)
		}
	}
	for _, c := range []struct {
		name, key string
		b         mat
		want      bool
	}{
		{"diffusers [value; gate]", "transformer_blocks.1.ff.net.0.proj", swapHalvesMat(fc1.whole()), true},
		{"release [gate; value]", "blocks.1.mlp.fc1", fc1.whole(), true},
		{"[gate; value] under a diffusers name", "transformer_blocks.1.ff.net.0.proj", fc1.whole(), false},
	} {
		p := writeLoRA(t, "fc1", []safetensors.Entry{fc1.a.entry(c.key + ".lora_A.weight"), c.b.entry(c.key + ".lora_B.weight")}, nil)
		ad, _, err := Load(cfg, []Use{{Path: p, Strength: 1}})
		if err != nil {
			t.Fatal(err)
		}
		got := effective(ad[fc1.site], 0, 2*cfg.FFNDim, cfg.HiddenSize)
		if ok := testkit.RelL2(got.v, fc1.delta(0).v) < 1e-6; ok != c.want {
			t.Errorf("%s: lands on the canonical rows = %v, want %v", c.name, ok, c.want)
		}
	}
}

// TestStrengthAndSeveral: strength 0 yields no update at all (the engine
// then runs the base model bit for bit); two LoRAs keep their own scales.
func TestStrengthAndSeveral(t *testing.T) {
	cfg := tinyConfig()
	ts := truths(cfg, 3, 4)
	es, _ := formats[0].write(cfg, ts)
	p := writeLoRA(t, "peft", es, nil)
	ad, applied, err := Load(cfg, []Use{{Path: p, Strength: 0}})
	if err != nil || ad != nil || applied[0].Strength != 0 || applied[0].Modules == 0 {
		t.Fatalf("strength 0: %v, %v, %+v", ad, err, applied)
	}
	ad, _, err = Load(cfg, []Use{{Path: p, Strength: 0.5}, {Path: p, Strength: -2}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range ts {
		parts, in, _ := cfg.SiteShape(tr.site)
		for c, out := range parts {
			if e := testkit.RelL2(effective(ad[tr.site], c, out, in).v, tr.delta(c).scale(-1.5).v); !(e < 1e-6) {
				t.Errorf("%s part %d: two LoRAs at 0.5 and −2: rel error %.3g", tr.site, c, e)
			}
		}
	}
}

// TestMisfitRefusedNamingTensor: a lora_B whose rows do not fit the module
// (hidden-size rows for to_k), a lora_A of the wrong width, ranks that
// disagree and a missing lora_B are refused naming the tensor.
func TestMisfitRefusedNamingTensor(t *testing.T) {
	cfg := tinyConfig()
	rng := rand.New(rand.NewPCG(5, 5))
	ok := func(k string, r, c int) safetensors.Entry { return randMat(rng, r, c).entry(k) }
	H, I := cfg.HiddenSize, cfg.Inner()
	for _, c := range []struct {
		name string
		es   []safetensors.Entry
		want string
	}{
		{"to_k rows", []safetensors.Entry{ok("transformer_blocks.0.attn.to_k.lora_A.weight", 2, H), ok("transformer_blocks.0.attn.to_k.lora_B.weight", H+1, 2)}, "transformer_blocks.0.attn.to_k.lora_B.weight"},
		{"qkv width", []safetensors.Entry{ok("blocks.1.attn.qkv_proj.lora_A.weight", 2, H+3), ok("blocks.1.attn.qkv_proj.lora_B.weight", 3*I, 2)}, "blocks.1.attn.qkv_proj.lora_A.weight"},
		{"ranks", []safetensors.Entry{ok("blocks.1.mlp.fc2.lora_A.weight", 2, cfg.FFNDim), ok("blocks.1.mlp.fc2.lora_B.weight", H, 3)}, "blocks.1.mlp.fc2.lora_B.weight"},
		{"unpaired", []safetensors.Entry{ok("blocks.1.mlp.fc2.lora_A.weight", 2, cfg.FFNDim)}, "blocks.1.mlp.fc2.lora_A.weight"},
		{"diff", []safetensors.Entry{ok("blocks.0.mlp.fc2.diff", H, H)}, "blocks.0.mlp.fc2.diff"},
	} {
		p := writeLoRA(t, "bad", c.es, nil)
		_, _, err := Load(cfg, []Use{{Path: p, Strength: 1}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error naming %s", c.name, err, c.want)
		}
	}
}

// TestUnmatchedAndUnknownListed: a block the transformer lacks and a
// tensor that is no LoRA tensor are listed, not silently dropped.
func TestUnmatchedAndUnknownListed(t *testing.T) {
	cfg := tinyConfig()
	rng := rand.New(rand.NewPCG(6, 6))
	H := cfg.HiddenSize
	es := []safetensors.Entry{
		randMat(rng, 2, H).entry("blocks.0.attn.out_proj.lora_A.weight"), randMat(rng, H, 2).entry("blocks.0.attn.out_proj.lora_B.weight"),
		randMat(rng, 2, H).entry("blocks.7.attn.out_proj.lora_A.weight"), randMat(rng, H, 2).entry("blocks.7.attn.out_proj.lora_B.weight"),
		randMat(rng, 2, H).entry("text_encoder.layers.0.q.lora_A.weight"), randMat(rng, 1, 2).entry("blocks.0.norm1.weight"),
	}
	p := writeLoRA(t, "mixed", es, nil)
	_, applied, err := Load(cfg, []Use{{Path: p, Strength: 1}})
	if err != nil {
		t.Fatal(err)
	}
	a := applied[0]
	if a.Modules != 1 || len(a.Unmatched) != 1 || a.Unmatched[0] != "blocks.7.attn.out_proj" || len(a.Unknown) != 2 {
		t.Fatalf("applied %+v", a)
	}
	w := strings.Join(a.Warnings(), "\n")
	for _, s := range []string{"blocks.7.attn.out_proj", "text_encoder.layers.0.q.lora_A.weight", "blocks.0.norm1.weight"} {
		if !strings.Contains(w, s) {
			t.Errorf("warnings do not name %s:\n%s", s, w)
		}
	}
}

// TestAlphaRules: given > .alpha > __metadata__ > the lightx2v inventory
// (8; 128 for a 768p file) > rank, each with its source.
func TestAlphaRules(t *testing.T) {
	big := dit.Config{HiddenSize: 8, NumLayers: 50, RefinerLayers: 2, Heads: 2, HeadDim: 4, FFNDim: 6, TimeEmbedDim: 5}
	rng := rand.New(rand.NewPCG(7, 7))
	var es []safetensors.Entry
	for _, stack := range []struct {
		prefix string
		n      int
	}{{"transformer_blocks.", 50}, {"token_refiner.refiner_blocks.", 2}} {
		for i := 0; i < stack.n; i++ {
			for _, m := range lightx2vModules {
				in, out := 8, 8
				switch m {
				case "ff.net.0.proj":
					out = 12
				case "ff.net.2":
					in = 6
				}
				k := fmt.Sprintf("%s%d.%s", stack.prefix, i, m)
				es = append(es, randMat(rng, 128, in).entry(k+".lora_A.default.weight"), randMat(rng, out, 128).entry(k+".lora_B.default.weight"))
			}
		}
	}
	dir := t.TempDir()
	p544 := filepath.Join(dir, "minimax_h3_fl2v_turbo_8step_v1.0_bf16.safetensors")
	p768 := filepath.Join(dir, "minimax_h3_fl2v_turbo_4step_v1.0_768p_bf16.safetensors")
	for _, p := range []string{p544, p768} {
		if err := safetensors.Write(p, es, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		path  string
		use   Use
		alpha float64
		src   string
	}{
		{p544, Use{Strength: 1}, 8, "lightx2v"},
		{p768, Use{Strength: 1}, 128, "768p"},
		{p544, Use{Strength: 1, Alpha: 64}, 64, "given"},
	} {
		c.use.Path = c.path
		ad, applied, err := Load(big, []Use{c.use})
		if err != nil {
			t.Fatal(err)
		}
		a := applied[0]
		if a.Alpha != c.alpha || !strings.Contains(a.AlphaSource, c.src) {
			t.Errorf("%s: alpha %g (%s), want %g (%s)", filepath.Base(c.path), a.Alpha, a.AlphaSource, c.alpha, c.src)
		}
		u := ad[dit.Site{Stack: dit.StackBlocks, Block: 3, Proj: dit.ProjOut}][0]
		if want := float32(c.alpha / 128); u.Scale != want {
			t.Errorf("%s: scale %g, want alpha/rank %g", filepath.Base(c.path), u.Scale, want)
		}
	}
	// One module fewer is no longer the lightx2v inventory: alpha = rank.
	p := writeLoRA(t, "minimax_h3_fl2v_turbo_8step_v1.0_bf16", es[2:], nil)
	_, applied, err := Load(big, []Use{{Path: p, Strength: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if a := applied[0]; a.Alpha != 128 || !strings.HasPrefix(a.AlphaSource, "rank") {
		t.Errorf("not the inventory: alpha %g (%s), want the rank", a.Alpha, a.AlphaSource)
	}
}

func TestParseUse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Use
		err  bool
	}{
		{"a.safetensors", Use{Path: "a.safetensors", Strength: 1}, false},
		{"a.safetensors:0.8", Use{Path: "a.safetensors", Strength: 0.8}, false},
		{"/x:y/a.safetensors:2:128", Use{Path: "/x:y/a.safetensors", Strength: 2, Alpha: 128}, false},
		{"/x:y/a.safetensors", Use{Path: "/x:y/a.safetensors", Strength: 1}, false},
		{"", Use{}, true},
		{"a:1000", Use{}, true},
		{"a:1:-3", Use{}, true},
	} {
		got, err := ParseUse(c.in)
		if (err != nil) != c.err || (!c.err && got != c.want) {
			t.Errorf("ParseUse(%q) = %+v, %v", c.in, got, err)
		}
	}
}

// TestDescribe: lora inspect names the format, the targets with their
// ranks, the alpha and its source, and the unknown tensors.
func TestDescribe(t *testing.T) {
	cfg := tinyConfig()
	es, _ := formats[3].write(cfg, truths(cfg, 3, 8)) // ComfyUI
	es = append(es, safetensors.F32("lora_te_text_model.q.lora_down.weight", compute.F32, compute.Shape{1, 1}, []float32{1}))
	p := writeLoRA(t, "comfy", es, nil)
	f, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	d := Describe(f)
	for _, s := range []string{"ComfyUI/ai-toolkit", "attn.qkv_proj", "rank 3", "contiguous", "alpha    3 (rank", "lora_te_text_model.q.lora_down.weight", f.SHA256} {
		if !strings.Contains(d, s) {
			t.Errorf("inspect output lacks %q:\n%s", s, d)
		}
	}
}

// FuzzParseKey: any tensor name parses or fails cleanly; a parsed key's
// module never keeps a known prefix, and resolving never panics.
func FuzzParseKey(f *testing.F) {
	for _, s := range []string{
		"transformer_blocks.0.attn.to_q.lora_A.weight", "transformer.transformer_blocks.49.ff.net.0.proj.lora_B.default.weight",
		"blocks.3.attn.qkv_proj.lora_A.weight", "diffusion_model.blocks.3.mlp.fc1.lora_B.weight",
		"lora_unet_blocks_0_attn_qkv_proj.lora_down.weight", "lora_unet_blocks_0_attn_qkv_proj.alpha",
		"blocks.0.adaln_proj.linear.diff_b", "final_layer.adaln_proj.linear.diff", "norm_out.linear.lora_A.turbo.weight",
		"token_refiner.refiner_blocks.1.attn.to_out.0.lora_B.weight", "base_model.model.transformer_blocks.1.attn.to_v.lora_A.weight",
		"blocks.007.attn.out_proj.lora_A.weight", ".lora_A.weight", "lora_unet_.alpha", "x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseKey(s)
		if err != nil {
			return
		}
		if k.Module == "" || k.Raw != s || k.Role < RoleA || k.Role > RoleDiffB {
			t.Fatalf("ParseKey(%q) = %+v", s, k)
		}
		if tg, err := Resolve(k); err == nil {
			if _, _, err := tinyConfig().SiteShape(tg.Site); err == nil && tg.Site.String() == "unknown module" {
				t.Fatalf("%q resolved to %+v", s, tg)
			}
		}
	})
}

// FuzzRead: any file is read, mapped onto the tiny transformer or refused
// with an error; nothing panics.
func FuzzRead(f *testing.F) {
	cfg := tinyConfig()
	dir := f.TempDir()
	for i, fm := range formats {
		es, meta := fm.write(cfg, truths(cfg, 2, uint64(i)))
		p := filepath.Join(dir, fm.name)
		if err := safetensors.Write(p, es[:4], meta); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "x.safetensors")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		lf, err := Read(p)
		if err != nil {
			return
		}
		_ = Describe(lf)
		ad, _, err := lf.Adapters(cfg, Use{Path: p, Strength: 1})
		if err == nil {
			if err := ad.Check(cfg); err != nil {
				t.Fatalf("mapped updates do not fit: %v", err)
			}
		}
	})
}
