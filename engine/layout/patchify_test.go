package layout

import (
	"slices"
	"testing"
)

func iota32(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i)
	}
	return v
}

func TestPatchify(t *testing.T) {
	// h3.c tests/test_h3.c test_dit_row_conversions: C=3, T=2, H=4, W=6
	// filled with its linear index; the first row is this.
	v := VideoShape{3, 2, 4, 6}
	rows, err := Patchify(nil, iota32(v.Len()), v, Patch{})
	if err != nil {
		t.Fatal(err)
	}
	first := []float32{0, 1, 6, 7, 48, 49, 54, 55, 96, 97, 102, 103}
	if !slices.Equal(rows[:12], first) {
		t.Errorf("first row = %v, want %v", rows[:12], first)
	}
	if v.PatchRows(Patch{}) != 12 || v.PatchWidth(Patch{}) != 12 {
		t.Errorf("rows %d width %d", v.PatchRows(Patch{}), v.PatchWidth(Patch{}))
	}
	// Row r = (t·2 + py)·3 + px: row 7 is t=1, py=0, px=1, whose first feature is z[0][1][0][2] = 24+2.
	if rows[7*12] != 26 {
		t.Errorf("row 7 starts with %v, want 26", rows[7*12])
	}
	back, err := Unpatchify(nil, rows, v, Patch{})
	if err != nil || !slices.Equal(back, iota32(v.Len())) {
		t.Fatalf("round trip failed: %v", err)
	}
	// Released geometry and a non-square patch round-trip too.
	for _, c := range []struct {
		v VideoShape
		p Patch
	}{{VideoShape{24, 7, 4, 6}, Patch{}}, {VideoShape{5, 3, 6, 8}, Patch{1, 3, 4}}} {
		src := iota32(c.v.Len())
		r, err := Patchify(make([]float32, len(src)), src, c.v, c.p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Unpatchify(nil, r, c.v, c.p)
		if err != nil || !slices.Equal(b, src) {
			t.Fatalf("%v %v: round trip failed: %v", c.v, c.p, err)
		}
	}
	for _, bad := range []struct {
		v VideoShape
		n int
		p Patch
	}{{VideoShape{3, 2, 5, 6}, 180, Patch{}}, {VideoShape{3, 2, 4, 6}, 10, Patch{}}, {VideoShape{3, 2, 4, 6}, 144, Patch{2, 2, 2}}} {
		if _, err := Patchify(nil, make([]float32, bad.n), bad.v, bad.p); err == nil {
			t.Errorf("Patchify(%v, %d values, %v) accepted", bad.v, bad.n, bad.p)
		}
	}
	if _, err := Patchify(make([]float32, 3), iota32(144), v, Patch{}); err == nil {
		t.Error("short destination accepted")
	}
}

func TestPackAudio(t *testing.T) {
	// [2 stereo, 3 channels, 4 latents]: row s·4+k holds a[s][0..3)[k].
	src := iota32(24)
	rows, err := PackAudio(nil, src, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11, 12, 16, 20, 13, 17, 21, 14, 18, 22, 15, 19, 23}
	if !slices.Equal(rows, want) {
		t.Errorf("rows = %v, want %v", rows, want)
	}
	back, err := UnpackAudio(nil, rows, 3, 4)
	if err != nil || !slices.Equal(back, src) {
		t.Fatalf("round trip: %v %v", back, err)
	}
	if _, err := PackAudio(nil, src, 5, 4); err == nil {
		t.Error("mismatched size accepted")
	}
	if _, err := UnpackAudio(nil, src, 0, 4); err == nil {
		t.Error("zero channels accepted")
	}
}
