package videovae

import (
	"context"
	"testing"

	"h3studio/engine/compute/testbackend"
)

// TestEncodeParity: the reduced oracle encode fixture (testdata/README),
// float32, rel-L2 < 1e-5: 17-frame chunking with last-frame padding and
// token drop, the single-image path, and a 2×3-tile encode (moments
// stitched in latent units). Measured (CPU, 1 or 2 threads, bit-identical):
// encode.moments 1.2e-6, encode_image.moments 9.2e-7, encode_tiled.moments
// 9.9e-7.
func TestEncodeParity(t *testing.T) {
	fx := openFixture(t, "encode.safetensors")
	for _, b := range testbackend.Threads(t, 2) {
		m, err := Open(b, "testdata/encoder/video_vae", "testdata/encoder/video_vae/source", &Options{EncoderOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		var errs [3]float64
		for i, c := range []struct {
			name string
			o    *EncodeOptions
		}{
			{"encode", nil},
			{"encode_image", nil},
			{"encode_tiled", &EncodeOptions{TileSize: 16, TileOverlap: 8}},
		} {
			got, err := m.EncodeMoments(ctx, fx.volume(t, c.name+".video"), c.o)
			if err != nil {
				t.Fatal(err)
			}
			errs[i] = checkVolume(t, c.name+".moments", got, fx.volume(t, c.name+".moments"), 1e-5)
		}
		t.Logf("%s: rel-L2 encode.moments %.2g encode_image.moments %.2g encode_tiled.moments %.2g", b.Device().Name, errs[0], errs[1], errs[2])
		m.Close()
	}
}
