package plan

import (
	"slices"
	"strings"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/layout"
)

const giB = int64(1) << 30

// TestChooseAcrossMacs checks the automatic choice at 512²×22 for the
// memory sizes Apple sells against the plan itself: the chosen mode fits
// its budget, every faster candidate does not, and the expected modes come
// out (16 GiB streams, 24 GiB holds the DiT in int4, 36 GiB in int8, 64 GiB
// and up in BF16).
func TestChooseAcrossMacs(t *testing.T) {
	q := Query{Canvas: layout.Canvas{Width: 512, Height: 512}, Frames: 22}
	want := map[int64]string{16: "streaming", 24: "resident-int4", 32: "resident-int8", 36: "resident-int8", 48: "resident-int8",
		64: "resident", 96: "resident", 128: "resident"}
	for _, mem := range []int64{16, 24, 32, 36, 48, 64, 96, 128} {
		c, err := Choose(q, mem*giB, 0, Balanced, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.Chosen.Mode.Name != want[mem] {
			t.Errorf("%d GiB: chose %s (%s), want %s", mem, c.Chosen.Mode.Name, c.Why, want[mem])
		}
		if !c.Chosen.Fits || c.Chosen.Peak > c.BudgetBytes || c.BudgetBytes >= c.WorkingSetBytes || c.WorkingSetBytes > c.DeviceBytes {
			t.Errorf("%d GiB: peak %d, budget %d, working set %d", mem, c.Chosen.Peak, c.BudgetBytes, c.WorkingSetBytes)
		}
		for _, mp := range c.Modes {
			if mp.Mode == c.Chosen.Mode {
				break
			}
			if mp.Peak <= c.BudgetBytes {
				t.Errorf("%d GiB: %s fits (%d ≤ %d) but %s was chosen", mem, mp.Mode.Name, mp.Peak, c.BudgetBytes, c.Chosen.Mode.Name)
			}
		}
		var largest int64
		for _, p := range c.Chosen.Phases {
			largest = max(largest, p.Peak())
		}
		if largest != c.Chosen.Peak {
			t.Errorf("%d GiB: end-to-end peak %d is not the largest phase (%d)", mem, c.Chosen.Peak, largest)
		}
	}
	if c, _ := Choose(q, 16*giB, 0, Balanced, nil); c.Chosen.Peak > 10*giB {
		t.Errorf("16 GiB: end-to-end peak %.2f GiB, target ≤ 10 GiB", float64(c.Chosen.Peak)/float64(giB))
	}
	// Best quality never quantizes; fastest streams quantized weights when
	// nothing is resident.
	if c, _ := Choose(q, 24*giB, 0, BestQuality, nil); c.Chosen.Mode.Name != "streaming" {
		t.Errorf("24 GiB best quality: %s", c.Chosen.Mode.Name)
	}
	if c, _ := Choose(q, 16*giB, 0, FastestThatFit, nil); c.Chosen.Mode.Name != "streaming-int4" {
		t.Errorf("16 GiB fastest: %s", c.Chosen.Mode.Name)
	}
	// A measured working set wins over the default estimate.
	if c, _ := Choose(q, 24*giB, 11*giB, Balanced, nil); c.Chosen.Mode.Name != "streaming" {
		t.Errorf("24 GiB with an 11 GiB working set: %s", c.Chosen.Mode.Name)
	}
	// Nothing fits: the lowest peak, said to swap.
	c, _ := Choose(q, 2*giB, 0, Balanced, nil)
	if c.Chosen.Fits || c.Chosen.Mode.Name != "streaming" || !strings.Contains(c.Why, "swap") {
		t.Errorf("2 GiB: %s fits %v (%s)", c.Chosen.Mode.Name, c.Chosen.Fits, c.Why)
	}
	// 16 GiB streams the video decoder too: the decode no longer holds all
	// of its 9 GiB of weights.
	c, _ = Choose(q, 16*giB, 0, Balanced, nil)
	if v := c.Chosen.Phases[2]; v.Residency != compute.Streaming || v.Storage.Peak > 3*giB {
		t.Errorf("16 GiB video decode: %s, %.2f GiB", v.Residency, float64(v.Storage.Peak)/float64(giB))
	}
}

// TestSessionKeepChoosesAsPlan: the session keeps every component loaded
// where they fit the budget together and otherwise releases each phase's
// (KeepWhenFits); over the released model's estimates on 16 to 128 GB Macs
// and under each quality floor it therefore chooses the mode that
// `h3studio plan` (KeepNever) chooses, keeping the components loaded only
// where their kept peak fits.
func TestSessionKeepChoosesAsPlan(t *testing.T) {
	q := Query{Canvas: layout.Canvas{Width: 512, Height: 512}, Frames: 22}
	for _, floor := range []QualityFloor{Balanced, BestQuality, FastestThatFit} {
		for _, mem := range []int64{16, 24, 32, 36, 48, 64, 96, 128} {
			c, err := Choose(q, mem*giB, 0, floor, nil)
			if err != nil {
				t.Fatal(err)
			}
			mps, err := planModes(q, c.BudgetBytes, CandidateModes(floor, nil), KeepWhenFits)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := Pick(mps, c.WorkingSetBytes, floor, nil)
			kept := PlanMode(got.Mode, estimatesOf(t, q, got.Mode), c.BudgetBytes, KeepAlways)
			t.Logf("%s %3d GB: %s, kept %v (kept peak %.1f GiB, budget %.1f GiB), peak %.2f GiB", floor, mem, got.Mode.Name, got.Kept,
				float64(kept.Peak)/float64(giB), float64(c.BudgetBytes)/float64(giB), float64(got.Peak)/float64(giB))
			if got.Mode != c.Chosen.Mode {
				t.Errorf("%s %d GB: the session's policy chooses %s, plan %s", floor, mem, got.Mode.Name, c.Chosen.Mode.Name)
			}
			if got.Kept != (got.Mode.Residency == compute.Resident && kept.Peak <= c.BudgetBytes) || !got.Fits && c.Chosen.Fits {
				t.Errorf("%s %d GB: %s kept %v, fits %v; kept peak %d, budget %d", floor, mem, got.Mode.Name, got.Kept, got.Fits, kept.Peak, c.BudgetBytes)
			}
		}
	}
}

// estimatesOf is the released model's estimates for mode m.
func estimatesOf(t *testing.T, q Query, m Mode) Estimates {
	t.Helper()
	q.Quant = m.Quant
	list, err := Run(q, "text-encoder", "dit", "video-vae", "audio-vae")
	if err != nil {
		t.Fatal(err)
	}
	return Estimates{Text: list[0], DiT: list[1], Video: list[2], Audio: list[3]}
}

// TestQuantizedDiTWeights checks the planned DiT weights against the
// scheme's arithmetic: the 50 blocks' linears hold 19.27 G weights, at
// 4.5 / 8.5 bits each with group 64 and a BF16 scale and bias per group.
func TestQuantizedDiTWeights(t *testing.T) {
	q := Query{Canvas: layout.Canvas{Width: 512, Height: 512}, Frames: 22}
	w := map[int]int64{}
	for _, f := range []compute.QuantFormat{{}, compute.Int8, compute.Int4} {
		qq := q
		qq.Quant = f
		es, err := Run(qq, "dit")
		if err != nil {
			t.Fatal(err)
		}
		w[f.Bits] = es[0].Resident.Weights
	}
	linear := float64(w[0]-w[8]) / (2 - 8.5/8) // bytes int8 saves over BF16 → weights in the quantized linears
	for _, b := range []int{8, 4} {
		bits := float64(b) + 0.5
		pred := float64(w[0]) - linear*(2-bits/8)
		if d := float64(w[b]) - pred; d > 0.01*pred || d < -0.01*pred {
			t.Errorf("int%d: DiT weights %.2f GiB, predicted %.2f GiB", b, float64(w[b])/float64(giB), pred/float64(giB))
		}
	}
	if n := linear; n < 19.2e9 || n > 19.4e9 {
		t.Errorf("quantized linears hold %.3g weights, want 19.27 G", n)
	}
	if w[4] < 8*giB || w[4] > 11*giB || w[8] < 16*giB || w[8] > 41*giB/2 {
		t.Errorf("DiT weights int4 %.2f GiB, int8 %.2f GiB", float64(w[4])/float64(giB), float64(w[8])/float64(giB))
	}
}

// TestPlanModeAddsPhases checks PlanMode's one definition of the
// end-to-end peak on made-up components: each phase holds its component
// (streamed where the mode or the budget says) and, when the mode keeps
// the components, the others' weights; the peak is the largest phase's,
// the device peak the same less the decoders' host buffers.
func TestPlanModeAddsPhases(t *testing.T) {
	st := func(w, a, host int64) Storage { return Storage{Peak: w + a, Weights: w, Activations: a, Host: host} }
	c := Estimates{
		Text:  Estimate{Component: "text-encoder", Resident: st(50, 5, 0), Streaming: st(4, 5, 0)},
		DiT:   Estimate{Component: "dit", Resident: st(30, 10, 0), Streaming: st(3, 10, 0)},
		Video: Estimate{Component: "video-vae", Resident: st(9, 20, 15), Streaming: st(1, 22, 15)},
		Audio: Estimate{Component: "audio-vae", Resident: st(1, 2, 1), Streaming: st(1, 2, 1)},
	}
	resident, _ := ParseMode("resident")
	streaming, _ := ParseMode("streaming")
	peaks := func(mp ModePlan) (out []int64) {
		for _, p := range mp.Phases {
			out = append(out, p.Peak())
		}
		return out
	}
	for _, tc := range []struct {
		name         string
		mode         Mode
		budget       int64
		keep         Keep
		phases       []int64
		peak, device int64
		kept         bool
		residency    string // text, denoise, video, audio
	}{
		// Kept: every phase holds all 90 bytes of weights.
		{"resident kept", resident, 0, KeepAlways, []int64{95, 100, 110, 92}, 110, 100, true, "RRRR"},
		{"resident alone", resident, 0, KeepNever, []int64{55, 40, 29, 3}, 55, 55, false, "RRRR"},
		// A budget of 50 streams the text encoder (55) but not the video
		// decoder (29).
		{"resident, small budget", resident, 50, KeepNever, []int64{9, 40, 29, 3}, 40, 40, false, "SRRR"},
		{"streaming", streaming, 0, KeepAlways, []int64{9, 13, 23, 3}, 23, 13, false, "SSSR"},
		// KeepWhenFits keeps where the kept peak (110) fits, else plans
		// the phases alone.
		{"resident, kept when it fits", resident, 120, KeepWhenFits, []int64{95, 100, 110, 92}, 110, 100, true, "RRRR"},
		{"resident, released when kept does not fit", resident, 100, KeepWhenFits, []int64{55, 40, 29, 3}, 55, 55, false, "RRRR"},
		{"resident, unknown budget, kept", resident, 0, KeepWhenFits, []int64{95, 100, 110, 92}, 110, 100, true, "RRRR"},
	} {
		mp := PlanMode(tc.mode, c, tc.budget, tc.keep)
		var res string
		for _, p := range mp.Phases {
			res += strings.ToUpper(p.Residency.String()[:1])
		}
		if got := peaks(mp); !slices.Equal(got, tc.phases) || mp.Peak != tc.peak || mp.DevicePeak != tc.device || mp.Kept != tc.kept || res != tc.residency {
			t.Errorf("%s: phases %v peak %d device %d kept %v residency %s, want %v %d %d %v %s",
				tc.name, got, mp.Peak, mp.DevicePeak, mp.Kept, res, tc.phases, tc.peak, tc.device, tc.kept, tc.residency)
		}
		if mp.DiT != mp.Phases[1].Storage {
			t.Errorf("%s: DiT storage %+v, the denoise phase's %+v", tc.name, mp.DiT, mp.Phases[1].Storage)
		}
	}
	// A snapshot without an audio decoder has no audio phase.
	c.Audio = Estimate{}
	if mp := PlanMode(resident, c, 0, KeepAlways); len(mp.Phases) != 3 || mp.Peak != 109 {
		t.Errorf("no audio decoder: %d phases, peak %d", len(mp.Phases), mp.Peak)
	}
}
