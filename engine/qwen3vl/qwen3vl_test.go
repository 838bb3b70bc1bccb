package qwen3vl

import (
	"context"
	"h3studio/engine/testkit"
	"math"
	"strings"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
	"h3studio/engine/compute/testbackend"
)

func loadTest(t testing.TB, b compute.Backend, mode compute.Residency) *Model {
	t.Helper()
	m, err := Open(b, testEncoder, testEncoder, &Options{Residency: mode})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// caseInput builds a fixture case's request the way the app will: token ids
// plus the raw uint8 image / sampled video frames run through Processor.
func caseInput(t *testing.T, p *parity, m *Model, c string) *Input {
	t.Helper()
	ids, _ := p.ints(c + ".in.input_ids")
	in := &Input{IDs: ids}
	proc := NewProcessor(m.Config(), m.Processor())
	if c == "text_fl2va" || c == "text_ref2va" {
		vi, _, err := proc.Image(p.rgb("text_fl2va.in.image")[0])
		if err != nil {
			t.Fatal(err)
		}
		if want := p.grids("text_fl2va.in.image_grid_thw")[0]; vi.Grid != want {
			t.Fatalf("image grid %v, want %v", vi.Grid, want)
		}
		in.Images = []VisionInput{vi}
	}
	if c == "text_video" || c == "text_ref2va" {
		vi, err := proc.Video(p.rgb("text_video.in.video_frames"))
		if err != nil {
			t.Fatal(err)
		}
		if want := p.grids("text_video.in.video_grid_thw")[0]; vi.Grid != want {
			t.Fatalf("video grid %v, want %v", vi.Grid, want)
		}
		in.Videos = []VisionInput{vi}
	}
	return in
}

// encodeTraced runs Encode and keeps every traced tensor (vision traces of
// several blocks concatenated).
func encodeTraced(t *testing.T, m *Model, in *Input, dt compute.DType) (*Output, map[string][]float32) {
	t.Helper()
	got := map[string][]float32{}
	out, err := m.Encode(context.Background(), in, EncodeOptions{Precision: dt, Trace: func(name string, x *compute.Tensor) {
		v, err := compute.ToFloat32(x)
		if err != nil {
			t.Fatal(err)
		}
		got[name] = append(got[name], v...)
	}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := compute.ToFloat32(out.Hidden)
	if err != nil {
		t.Fatal(err)
	}
	got["hidden"] = v
	return out, got
}

// TestParity compares the encoder with transformers' Qwen3-VL on the
// oracle's seed-0 fixtures (testdata/parity.safetensors): fp32 rel-L2 <
// 1e-5 against the fp32 reference, bf16 rel-L2 < 3e-2 against the bf16
// reference, M-RoPE positions and DiT tags exact. The images and video
// frames go through Processor, so preprocessing is covered too.
func TestParity(t *testing.T) {
	p := openParity(t)
	m := loadTest(t, testbackend.New(t), compute.Resident)
	traceName := map[string]string{"hidden": "out.hidden_tap", "vision.merged": "out.vision.merged"}
	for _, c := range []string{"text_t2va", "text_fl2va", "text_video", "text_ref2va"} {
		t.Run(strings.TrimPrefix(c, "text_"), func(t *testing.T) {
			in := caseInput(t, p, m, c)
			for _, prec := range []struct {
				dt     compute.DType
				prefix string
				bound  float64
			}{{compute.F32, "", 1e-5}, {compute.BF16, "bf16.", 3e-2}} {
				out, got := encodeTraced(t, m, in, prec.dt)
				worst := 0.0
				checked := 0
				for name, v := range got {
					ref := traceName[name]
					if ref == "" {
						switch {
						case strings.HasPrefix(name, "vision.deepstack"):
							ref = "out." + name
						default:
							ref = "mid." + name
						}
					}
					key := c + "." + prec.prefix + ref
					if !p.has(key) {
						continue
					}
					want, _ := p.floats(key)
					if len(v) != len(want) {
						t.Fatalf("%s: %d values, want %d", key, len(v), len(want))
					}
					e := testkit.RelL2(v, want)
					worst = max(worst, e)
					checked++
					if !(e < prec.bound) {
						t.Errorf("%s: rel-L2 %.3g ≥ %g", key, e, prec.bound)
					}
				}
				if checked == 0 || !p.has(c+"."+prec.prefix+"out.hidden_tap") {
					t.Fatalf("%s %v: nothing compared", c, prec.dt)
				}
				t.Logf("%v: %d tensors, worst rel-L2 %.3g", prec.dt, checked, worst)
				m.b.Free(out.Hidden)

				wantTags, _ := p.ints(c + ".h3.text_token_tags")
				wantPos, _ := p.ints(c + ".in.position_ids")
				L := len(in.IDs)
				for i := 0; i < L; i++ {
					if out.Tags[i] != wantTags[i] {
						t.Fatalf("tag of token %d = %d, want %d", i, out.Tags[i], wantTags[i])
					}
					for a := 0; a < 3; a++ {
						if out.Positions[a][i] != wantPos[a*L+i] {
							t.Fatalf("position (axis %d, token %d) = %d, want %d", a, i, out.Positions[a][i], wantPos[a*L+i])
						}
					}
				}
			}
		})
	}
}

// TestStreamingMatchesResident runs the same requests with layers streamed
// from disk and resident: the outputs must be bit-identical, the streamer
// must never hold more than two layers, and it must read every run layer
// exactly once per request.
func TestStreamingMatchesResident(t *testing.T) {
	p := openParity(t)
	b := cpu.New(cpu.Options{})
	res := loadTest(t, b, compute.Resident)
	str := loadTest(t, b, compute.Streaming)
	layerBytes := SpecBytes(res.Config().LayerSpecs(0), compute.BF16)
	for _, c := range []string{"text_t2va", "text_ref2va"} {
		in := caseInput(t, p, res, c)
		for _, dt := range []compute.DType{compute.F32, compute.BF16} {
			before := str.Stats()
			a, err := res.Encode(context.Background(), in, EncodeOptions{Precision: dt})
			if err != nil {
				t.Fatal(err)
			}
			s, err := str.Encode(context.Background(), in, EncodeOptions{Precision: dt})
			if err != nil {
				t.Fatal(err)
			}
			av, _ := compute.ToFloat32(a.Hidden)
			sv, _ := compute.ToFloat32(s.Hidden)
			for i := range av {
				if math.Float32bits(av[i]) != math.Float32bits(sv[i]) {
					t.Fatalf("%s %v: streamed output differs at %d: %g vs %g", c, dt, i, sv[i], av[i])
				}
			}
			b.Free(a.Hidden, s.Hidden)
			after := str.Stats()
			if after.MaxResidentLayers > 2 || after.ResidentLayers != 0 {
				t.Fatalf("streamer held up to %d layers (%d left)", after.MaxResidentLayers, after.ResidentLayers)
			}
			if n := after.LayersRun - before.LayersRun; n != int64(str.Layers()) {
				t.Fatalf("ran %d layers, want %d", n, str.Layers())
			}
			if got, want := after.BytesStreamed-before.BytesStreamed, int64(str.Layers())*layerBytes; got < want || got > want+int64(str.Layers())*64*11 {
				t.Fatalf("streamed %d bytes, want %d (+alignment)", got, want)
			}
		}
	}
	if st := str.Stats(); st.MaxResidentLayers != 2 {
		t.Fatalf("max resident layers %d, want 2 (prefetch overlapping compute)", st.MaxResidentLayers)
	}
	if st := res.Stats(); st.BytesStreamed != 0 || st.MaxResidentLayers != 0 {
		t.Fatalf("resident model streamed: %+v", st)
	}
}

// TestVisionBlocksSeparately checks that a video's temporal blocks are
// encoded one at a time (each its own attention window and M-RoPE base):
// encoding the video as two one-block videos gives the same result.
func TestVisionBlocksSeparately(t *testing.T) {
	p := openParity(t)
	m := loadTest(t, cpu.New(cpu.Options{}), compute.Resident)
	in := caseInput(t, p, m, "text_video")
	v := in.Videos[0]
	half := len(v.Pixels) / 2
	g := Grid{T: 1, H: v.Grid.H, W: v.Grid.W}
	split := &Input{IDs: in.IDs, Videos: []VisionInput{{Pixels: v.Pixels[:half], Grid: g}, {Pixels: v.Pixels[half:], Grid: g}}}
	a, err := m.Encode(context.Background(), in, EncodeOptions{Precision: compute.F32})
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Encode(context.Background(), split, EncodeOptions{Precision: compute.F32})
	if err != nil {
		t.Fatal(err)
	}
	av, _ := compute.ToFloat32(a.Hidden)
	bv, _ := compute.ToFloat32(b.Hidden)
	if e := testkit.RelL2(bv, av); e != 0 {
		t.Fatalf("split video differs: rel-L2 %g", e)
	}
}
