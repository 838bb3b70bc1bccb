package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"h3studio/engine/compute"
	"h3studio/engine/testkit"
)

// torchaudio parity. testdata/gen_audio.py (Debian torch 1.13, torchaudio
// 0.13.1) wrote each reference normalisation (truncate at the native rate,
// mono→stereo, one transforms.Resample(rate, 32000) with its defaults). The
// metric is the maximum absolute difference over all samples (full scale 1)
// and the relative L2 error.

type audioManifest struct {
	Resample []struct {
		In       string `json:"in"`
		Rate     int    `json:"rate"`
		Channels int    `json:"channels"`
		Frames   int    `json:"frames"`
		Want     string `json:"want"`
	} `json:"resample"`
	WAV []struct {
		File     string `json:"file"`
		Rate     int    `json:"rate"`
		Channels int    `json:"channels"`
		Want     string `json:"want"`
	} `json:"wav"`
}

func loadAudioManifest(t testing.TB) audioManifest {
	var m audioManifest
	testkit.ReadJSON(t, "testdata/audio/manifest.json", &m)
	return m
}

// readF32 reads a raw little-endian float32 file of testdata/audio.
func readF32(t testing.TB, name string) []float32 {
	return compute.DecodeFloat32(compute.F32, testkit.ReadFile(t, filepath.Join("testdata/audio", name)))
}

// Bounds of the torchaudio comparison (float32 accumulation order only).
const (
	resampleMaxAbs = 5e-7
	resampleRelL2  = 3e-7
)

func TestResampleTorchaudio(t *testing.T) {
	for _, c := range loadAudioManifest(t).Resample {
		t.Run(c.Want, func(t *testing.T) {
			in := Audio{Rate: c.Rate, Channels: c.Channels, Samples: readF32(t, c.In)}
			got, err := PrepareAudio(in, c.Frames)
			if err != nil {
				t.Fatal(err)
			}
			want := readF32(t, c.Want)
			if got.Rate != SampleRate || got.Channels != 2 || len(got.Samples) != len(want) {
				t.Fatalf("got %d Hz %d ch %d samples, want 32000 Hz 2 ch %d samples", got.Rate, got.Channels, len(got.Samples), len(want))
			}
			maxAbs, rel := testkit.MaxAbs(got.Samples, want), testkit.RelL2(got.Samples, want)
			t.Logf("%d Hz %d ch → 32 kHz stereo: max |Δ| %.3g, rel-L2 %.3g", c.Rate, c.Channels, maxAbs, rel)
			if maxAbs > resampleMaxAbs || rel > resampleRelL2 {
				t.Errorf("max |Δ| %.3g (bound %g), rel-L2 %.3g (bound %g)", maxAbs, resampleMaxAbs, rel, resampleRelL2)
			}
		})
	}
}

func TestWAVDecode(t *testing.T) {
	for _, c := range loadAudioManifest(t).WAV {
		t.Run(c.File, func(t *testing.T) {
			a, err := ReadWAVFile(filepath.Join("testdata/audio", c.File))
			if err != nil {
				t.Fatal(err)
			}
			want := readF32(t, c.Want)
			if a.Rate != c.Rate || a.Channels != c.Channels || len(a.Samples) != len(want) {
				t.Fatalf("got %d Hz %d ch %d samples, want %d Hz %d ch %d", a.Rate, a.Channels, len(a.Samples), c.Rate, c.Channels, len(want))
			}
			for i := range want {
				if a.Samples[i] != want[i] {
					t.Fatalf("sample %d = %v, want %v", i, a.Samples[i], want[i])
				}
			}
		})
	}
}

func TestWAVRoundTrip(t *testing.T) {
	in := Audio{Rate: 32000, Channels: 2, Samples: []float32{0, 0.5, -0.5, 1, -1, 0.25, 1.5, -1.5, 0.123, -0.9}}
	dir := t.TempDir()
	for _, f := range []SampleFormat{PCM16, PCM24, Float32} {
		p := filepath.Join(dir, "x.wav")
		if err := WriteWAVFile(p, in, f); err != nil {
			t.Fatal(err)
		}
		out, err := ReadWAVFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if out.Rate != 32000 || out.Channels != 2 || len(out.Samples) != len(in.Samples) {
			t.Fatalf("format %d: %+v", f, out)
		}
		tol := map[SampleFormat]float64{PCM16: 1.0 / (1 << 15), PCM24: 1.0 / (1 << 23), Float32: 0}[f]
		for i, v := range in.Samples {
			w := math.Max(-1, math.Min(1-tol, float64(v)))
			if f == Float32 {
				w = float64(v)
			}
			if math.Abs(float64(out.Samples[i])-w) > tol/2+1e-12 {
				t.Errorf("format %d sample %d: %v, want %v", f, i, out.Samples[i], w)
			}
		}
		if m, _ := filepath.Glob(filepath.Join(dir, ".*part")); len(m) != 0 {
			t.Errorf("temporary files left: %v", m)
		}
	}
}

func TestStereoTruncate(t *testing.T) {
	m := Audio{Rate: 8000, Channels: 1, Samples: []float32{1, 2, 3}}
	s := m.Stereo()
	if s.Channels != 2 || len(s.Samples) != 6 || s.Samples[2] != 2 || s.Samples[3] != 2 {
		t.Errorf("mono→stereo = %+v", s)
	}
	q := Audio{Rate: 8000, Channels: 4, Samples: []float32{1, 2, 3, 4, 5, 6, 7, 8}}.Stereo()
	if q.Channels != 2 || len(q.Samples) != 4 || q.Samples[2] != 5 || q.Samples[3] != 6 {
		t.Errorf("4ch→stereo = %+v", q)
	}
	if n := s.Truncate(2).Frames(); n != 2 {
		t.Errorf("Truncate(2) frames = %d", n)
	}
}

// TestWAVHeaderFirst: opening a WAV reads its header, not its samples. A
// (sparse) 31-minute file is refused as too long without reading its
// 357 MB; a valid file's Info comes from the header and its samples from
// Audio; chunks that push the samples past the first megabyte still work.
func TestWAVHeaderFirst(t *testing.T) {
	dir := t.TempDir()
	header := func(extra []byte, dataBytes uint32) []byte {
		var b bytes.Buffer
		le := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
		b.WriteString("RIFF")
		le(uint32(4 + 24 + len(extra) + 8 + int(dataBytes)))
		b.WriteString("WAVEfmt ")
		le(uint32(16))
		le(uint16(1))
		le(uint16(2))
		le(uint32(48000))
		le(uint32(48000 * 4))
		le(uint16(4))
		le(uint16(16))
		b.Write(extra)
		b.WriteString("data")
		le(dataBytes)
		return b.Bytes()
	}

	long := filepath.Join(dir, "long.wav")
	size := uint32(31 * 60 * 48000 * 4)
	if err := os.WriteFile(long, header(nil, size), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(long, int64(44+size)); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Open(long)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "long.wav") {
		t.Errorf("31-minute WAV: %v", err)
	}
	if _, err := ReadWAVFile(long); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadWAVFile of the 31-minute WAV: %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
		t.Errorf("refusing the 31-minute WAV allocated %d MB", n>>20)
	}

	// 0.5 s of a ramp, behind a 2 MB LIST chunk (past the first megabyte).
	list := append([]byte("LIST\x00\x00\x20\x00"), make([]byte, 2<<20)...)
	for _, extra := range [][]byte{nil, list} {
		frames := 24000
		pcm := make([]byte, 4*frames)
		for i := 0; i < 2*frames; i++ {
			binary.LittleEndian.PutUint16(pcm[2*i:], uint16(int16(i%1000-500)))
		}
		p := filepath.Join(dir, fmt.Sprintf("ramp%d.wav", len(extra)))
		if err := os.WriteFile(p, append(header(extra, uint32(len(pcm))), pcm...), 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if i := src.Info(); i.Kind != KindAudio || i.SampleRate != 48000 || i.Channels != 2 || i.Duration != 500*time.Millisecond || !i.HasAudio {
			t.Errorf("%s: info %+v", p, i)
		}
		a, err := src.Audio(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if a.Frames() != frames || a.Samples[3] != float32(3-500)/(1<<15) {
			t.Errorf("%s: %d frames, sample 3 = %v", p, a.Frames(), a.Samples[3])
		}
	}
}
