package media

import (
	"image"
	"testing"
)

// BenchmarkResizeLanczos: one reference-video frame, 1920×1080 → 1344×768
// (the per-frame cost of NormalizeVideo).
func BenchmarkResizeLanczos(b *testing.B) {
	src := image.NewRGBA(image.Rect(0, 0, 1920, 1080))
	for i := range src.Pix {
		src.Pix[i] = uint8(i * 7)
	}
	b.SetBytes(int64(len(src.Pix)))
	for b.Loop() {
		Resize(src, 1344, 768, Lanczos)
	}
}

// BenchmarkResampleAudio: 15 s of 44.1 kHz stereo to 32 kHz (torchaudio's
// filter).
func BenchmarkResampleAudio(b *testing.B) {
	a := Audio{Rate: 44100, Channels: 2, Samples: make([]float32, 2*44100*15)}
	for b.Loop() {
		Resample(a, SampleRate)
	}
}
