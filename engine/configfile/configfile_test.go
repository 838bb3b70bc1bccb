package configfile

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseObjectRules(t *testing.T) {
	for in, rule := range map[string]string{
		"":             "not a valid JSON object",
		"null":         "not a valid JSON object",
		"[1]":          "not a valid JSON object",
		"{} {}":        "trailing data",
		`{"a":1`:       "not a valid JSON object",
		"\xff\xfe{}":   "not a valid JSON object",
		`{"a":1} junk`: "trailing data",
	} {
		_, err := Parse("c.json", []byte(in))
		if err == nil || !strings.Contains(err.Error(), rule) || !strings.Contains(err.Error(), "c.json") {
			t.Errorf("%q: %v, want %q", in, err, rule)
		}
	}
}

// TestLatentStats: the one rule both VAE packages and their config file
// readers apply to latent statistics.
func TestLatentStats(t *testing.T) {
	if _, _, err := LatentStats("c.json", nil, []float64{1}); err == nil || !strings.Contains(err.Error(), `c.json: missing required key "latents_mean"`) {
		t.Errorf("missing mean: %v", err)
	}
	if _, _, err := LatentStats("c.json", []float64{1}, nil); err == nil || !strings.Contains(err.Error(), `"latents_std"`) {
		t.Errorf("missing std: %v", err)
	}
	m, s, err := LatentStats("c.json", []float64{0.1, -2}, []float64{1e39, 0.5})
	if err != nil || m[0] != float32(0.1) || !math.IsInf(float64(s[0]), 1) {
		t.Fatalf("conversion: %v %v %v", m, s, err)
	}
	for _, c := range []struct {
		mean, std []float32
		want      string
	}{
		{[]float32{0, 1}, []float32{1, 2}, ""},
		{[]float32{0}, []float32{1, 2}, "latents_mean has 1 and latents_std 2 values for 2 latent channels"},
		{[]float32{0, 1}, []float32{1, 0}, "latents_std[1] = 0 must be positive"},
		{[]float32{0, 1}, []float32{float32(math.Inf(1)), 1}, "latents_std[0] = +Inf must be finite"},
		{[]float32{float32(math.NaN()), 1}, []float32{1, 1}, "latents_mean[0] = NaN must be finite"},
	} {
		err := CheckLatentStats(c.mean, c.std, 2)
		if (c.want == "") != (err == nil) || err != nil && err.Error() != c.want {
			t.Errorf("CheckLatentStats(%v, %v) = %v, want %q", c.mean, c.std, err, c.want)
		}
	}
}

// TestReadInto: the file's object reaches fill, whose error is returned;
// a missing file is the reader's error and fill is not called.
func TestReadInto(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metadata.json")
	if err := os.WriteFile(path, []byte(`{"rate": 32000}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rate := 0
	err := ReadInto(path, func(o *Object) error {
		rate = o.PosInt("rate")
		return o.Err()
	})
	if err != nil || rate != 32000 {
		t.Errorf("ReadInto: rate %d, %v", rate, err)
	}
	called := false
	err = ReadInto(filepath.Join(t.TempDir(), "missing.json"), func(*Object) error { called = true; return nil })
	if called || err == nil || !strings.Contains(err.Error(), "file is missing") {
		t.Errorf("missing file: called %v, %v", called, err)
	}
}
