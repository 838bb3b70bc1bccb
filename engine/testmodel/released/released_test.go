package released_test

import (
	"fmt"
	"strings"
	"testing"

	"h3studio/engine/audiovae"
	"h3studio/engine/configfile/configtest"
	"h3studio/engine/dit"
	"h3studio/engine/qwen3vl"
	"h3studio/engine/safetensors"
	"h3studio/engine/snapshot/snapshottest"
	"h3studio/engine/testmodel/released"
	"h3studio/engine/videovae"
)

// sameInventory compares what a component's own inventory of the released
// config lists with the independent, hand-written release inventory.
func sameInventory(t *testing.T, what string, got safetensors.Inventory, want []snapshottest.Tensor) {
	t.Helper()
	w := map[string]string{}
	for _, x := range want {
		w[x.Name] = fmt.Sprintf("%s%v", x.DType, x.Shape)
	}
	seen := 0
	for _, s := range got {
		g := fmt.Sprintf("%s%v", s.DType, []int(s.Shape))
		if w[s.Name] == "" {
			t.Errorf("%s: the writer would write %s %s, which the release does not hold", what, s.Name, g)
			continue
		}
		if w[s.Name] != g {
			t.Errorf("%s: %s is %s, released %s", what, s.Name, g, w[s.Name])
		}
		seen++
	}
	if seen != len(want) {
		t.Errorf("%s: %d of the release's %d tensors written", what, seen, len(want))
	}
}

// The released configs, parsed by each component's own reader, give
// inventories equal to the release's (names, shapes, dtypes): what
// testmodel --size released writes is the released checkpoint's layout.
func TestConfigsGiveTheReleasedInventories(t *testing.T) {
	for _, part := range []string{"fl2va", "ref2va"} {
		c := released.Configs(part)
		d, err := dit.ParseConfig("transformer/config.json", configtest.MustJSON(c["transformer/config.json"]))
		if err != nil {
			t.Fatal(err)
		}
		want := dit.Released()
		want.Keys = dit.OriginalKeys
		if d != want {
			t.Errorf("%s transformer config parses to %+v, want dit.Released()", part, d)
		}
		sameInventory(t, part+" transformer", dit.Inventory(d, dit.OriginalLayout), snapshottest.TransformerInventory())

		q, err := qwen3vl.ParseConfig("text_encoder/config.json", configtest.MustJSON(c["text_encoder/config.json"]))
		if err != nil {
			t.Fatal(err)
		}
		var lm []snapshottest.Tensor
		for _, x := range snapshottest.TextEncoderInventory() {
			// The final norm and LM head are in the release but never read (qwen3vl.Inventory omits them).
			if !strings.HasPrefix(x.Name, "lm_head.") && x.Name != "model.language_model.norm.weight" {
				lm = append(lm, x)
			}
		}
		sameInventory(t, part+" text encoder", qwen3vl.Inventory(q), lm)

		v, err := videovae.ParseConfig("video_vae/config.json", configtest.MustJSON(c["video_vae/config.json"]), "video_vae/source/config.json", configtest.MustJSON(c["video_vae/source/config.json"]))
		if err != nil {
			t.Fatal(err)
		}
		v.DecoderFFNHidden = 4 * v.Dim()
		sameInventory(t, part+" video VAE", videovae.Inventory(v), snapshottest.VideoVAEInventory())

		a, err := audiovae.ParseConfig("audio_vae/config.json", configtest.MustJSON(c["audio_vae/config.json"]), "audio_vae/metadata.json", configtest.MustJSON(c["audio_vae/metadata.json"]))
		if err != nil {
			t.Fatal(err)
		}
		sameInventory(t, part+" audio VAE", audiovae.Inventory(a), snapshottest.AudioVAEInventory())
	}
}

// Options are checked before anything is written.
func TestCheck(t *testing.T) {
	for _, o := range []released.Options{{Components: []string{"dit", "vae"}}, {Blocks: -1}, {TextLayers: -2}, {Partitions: []string{"t2va"}}} {
		if err := released.Check(o); err == nil {
			t.Errorf("Check(%+v) accepted", o)
		}
	}
	if err := released.Check(released.Options{Components: released.AllComponents, Blocks: 1}); err != nil {
		t.Error(err)
	}
}

// Bytes counts each partition's transformer and the shared components once,
// as Write lays them out (the second partition hard-links the shared ones).
func TestBytesCountsWhatIsWritten(t *testing.T) {
	c := released.Configs("fl2va")
	tc := c["transformer/config.json"].(map[string]any)
	tc["num_layers"] = 3
	d, err := dit.ParseConfig("transformer/config.json", configtest.MustJSON(tc))
	if err != nil {
		t.Fatal(err)
	}
	block := dit.Inventory(d, dit.OriginalLayout).Bytes()
	a, err := audiovae.ParseConfig("audio_vae/config.json", configtest.MustJSON(c["audio_vae/config.json"]), "audio_vae/metadata.json", configtest.MustJSON(c["audio_vae/metadata.json"]))
	if err != nil {
		t.Fatal(err)
	}
	audio := audiovae.Inventory(a).Bytes()
	for _, tc := range []struct {
		parts []string
		want  int64
	}{{nil, 2*block + audio}, {[]string{"fl2va"}, block + audio}, {[]string{"ref2va"}, block + audio}, {[]string{"fl2va", "ref2va"}, 2*block + audio}} {
		got, err := released.Bytes(released.Options{Components: []string{released.DiT, released.AudioVAE}, Partitions: tc.parts, Blocks: 3})
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("partitions %v: Bytes = %d, want %d", tc.parts, got, tc.want)
		}
	}
}
