package metal

import (
	"path/filepath"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/safetensors"
)

// WriteCheckpoint writes entries to a safetensors file in a test folder,
// opens it and returns a Binder of it onto b: how the backend tests map
// weights. The caller closes the file.
func WriteCheckpoint(t testing.TB, b compute.Backend, entries ...safetensors.Entry) (*safetensors.File, *safetensors.Binder) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "w.safetensors")
	if err := safetensors.Write(path, entries, nil); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return f, safetensors.NewBinder("test", f, b)
}
