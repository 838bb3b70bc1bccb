package plan

import (
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
	if v := c.Chosen.Phases[2]; v.Residency != "streaming" || v.Storage.Peak > 3*giB {
		t.Errorf("16 GiB video decode: %s, %.2f GiB", v.Residency, float64(v.Storage.Peak)/float64(giB))
	}
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
