// Package take is the take record: take.json, the one JSON document that
// describes a generation well enough to understand and repeat it. The
// command line writes it beside its outputs (`h3studio generate`), the
// studio writes it into every take folder of its library, and both read it
// with Read, so a take made by one opens in the other.
package take

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"h3studio/engine"
	"h3studio/engine/atomicfile"
)

// File is the take record's file name in a take folder (the studio's
// library, a frames folder).
const File = "take.json"

// Version is the record's format version.
const Version = 1

// Record is take.json: everything needed to understand and repeat a take.
type Record struct {
	Version    int         `json:"version"`
	Title      string      `json:"title"`
	Created    time.Time   `json:"created"`
	Task       engine.Task `json:"task"`
	Prompt     string      `json:"prompt"`
	First      *MediaRef   `json:"first_frame,omitempty"`
	Last       *MediaRef   `json:"last_frame,omitempty"`
	References []MediaRef  `json:"references,omitempty"`
	Settings   Settings    `json:"settings"`
	// Request is the request as the engine resolved it (every default
	// filled in), when the writer had it.
	Request    *engine.Request `json:"request,omitempty"`
	Seed       uint64          `json:"seed"`
	Frames     int             `json:"frames"`
	Width      int             `json:"width"`
	Height     int             `json:"height"`
	FPS        int             `json:"fps"`
	Seconds    float64         `json:"seconds"`
	SampleRate int             `json:"sample_rate"`
	Channels   int             `json:"channels"`
	// Timings per phase in seconds, and the total.
	Timings      map[engine.Phase]float64 `json:"timings"`
	TotalSeconds float64                  `json:"total_seconds"`
	Profile      []PhaseProfile           `json:"profile,omitempty"`
	PeakBytes    int64                    `json:"peak_bytes"`
	// PredictedPeakBytes is the plan's prediction of PeakBytes for Memory,
	// the memory mode the plan chose.
	PredictedPeakBytes int64             `json:"predicted_peak_bytes,omitempty"`
	Memory             engine.MemoryMode `json:"memory_mode,omitempty"`
	// MemoryWhy says why the plan chose Memory (the automatic choice).
	MemoryWhy  string `json:"memory_mode_why,omitempty"`
	TextCached bool   `json:"text_conditioning_cached,omitempty"`
	Files      Files  `json:"files"`
	// Outputs names the files a command-line take wrote ("video",
	// "frames", "audio"), as given on the command line.
	Outputs map[string]string `json:"outputs,omitempty"`
	App     AppInfo           `json:"app"`
	Model   ModelRef          `json:"model"`
	Notes   []string          `json:"notes,omitempty"` // the plan's adjustments
	// LoRAs records each LoRA the take applied: path, sha256, strength,
	// alpha and where the alpha came from, what it could not apply.
	LoRAs []engine.AppliedLoRA `json:"loras,omitempty"`
	Extra map[string]float64   `json:"extra,omitempty"`
	// Sample marks the take the studio rendered on its first start with the
	// demo checkpoint (random weights), not one the user asked for.
	Sample  bool `json:"sample,omitempty"`
	Starred bool `json:"starred,omitempty"`
}

// MediaRef is an input file as the record keeps it.
type MediaRef struct {
	Label string      `json:"label,omitempty"` // "Picture 1" (references)
	Kind  string      `json:"kind"`            // engine reference kind, or "image" for keyframes
	Path  string      `json:"path"`
	Hash  string      `json:"sha256,omitempty"` // HashFile of the file's bytes
	Sound *MediaRef   `json:"sound,omitempty"`  // paired sound file of a video reference
	Info  *MediaShape `json:"info,omitempty"`
}

// MediaShape is what was known of an input.
type MediaShape struct {
	Width    int     `json:"width,omitempty"`
	Height   int     `json:"height,omitempty"`
	Seconds  float64 `json:"seconds,omitempty"`
	HasAudio bool    `json:"has_audio,omitempty"`
}

// Settings are the draft's settings plus the request as resolved by the
// engine's plan.
type Settings struct {
	Canvas         string            `json:"canvas"`
	Quality        engine.Preset     `json:"quality"`
	Custom         bool              `json:"custom"`
	Steps          int               `json:"steps"`
	Reuse          int               `json:"reuse"`
	Layers         int               `json:"layers"`
	CoreReuse      int               `json:"core_reuse"`
	TokenReduction bool              `json:"token_reduction"`
	RenderWidth    int               `json:"render_width,omitempty"`
	RenderHeight   int               `json:"render_height,omitempty"`
	Memory         engine.MemoryMode `json:"memory"`
	Preview        bool              `json:"preview"`
	// Turbo is the Turbo preset's passes (0: off); LoRAs the take's LoRAs
	// with their strengths, as Re-run restores them.
	Turbo int           `json:"turbo,omitempty"`
	LoRAs []engine.LoRA `json:"loras,omitempty"`
}

// Files names the take folder's files (empty: not written).
type Files struct {
	Video  string `json:"video,omitempty"`
	Audio  string `json:"audio,omitempty"`
	Thumb  string `json:"thumb,omitempty"`
	Last   string `json:"last_frame,omitempty"`
	Viewer string `json:"viewer,omitempty"`
}

// AppInfo records what made the take.
type AppInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Device  string `json:"device,omitempty"`  // the compute device ("CPU (reference backend) · 2 cores · 24 GB")
	Backend string `json:"backend,omitempty"` // the compute backend's name ("cpu", "metal")
}

// ModelRef describes the model of a take.
type ModelRef struct {
	Name   string `json:"name"`
	Dir    string `json:"dir,omitempty"`
	Engine string `json:"engine,omitempty"` // "development fake engine" for synthetic takes
	// Version identifies the weights (the engine's model_version: a hash of
	// the transformer's config and shard index), so a take made by other
	// weights in the same folder can be told apart.
	Version string `json:"version,omitempty"`
}

// PhaseProfile is one phase's profile.
type PhaseProfile struct {
	Phase      engine.Phase `json:"phase"`
	Seconds    float64      `json:"seconds"`
	Units      int          `json:"units"`
	Unit       string       `json:"unit"`
	Dispatches int64        `json:"dispatches"`
	GFLOP      float64      `json:"gflop"`
	PeakBytes  int64        `json:"peak_bytes"`
}

// Inputs lists every input file the record names: the keyframes, the
// references and their paired sounds, in request order.
func (r Record) Inputs() []MediaRef {
	var out []MediaRef
	for _, m := range []*MediaRef{r.First, r.Last} {
		if m != nil {
			out = append(out, *m)
		}
	}
	for _, m := range r.References {
		out = append(out, m)
		if m.Sound != nil {
			out = append(out, *m.Sound)
		}
	}
	return out
}

// Encode is the record as take.json holds it: indented JSON and a newline.
func Encode(r Record) ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("take: %w", err)
	}
	return append(b, '\n'), nil
}

// Write writes r to path atomically (engine/atomicfile).
func Write(path string, r Record) error {
	b, err := Encode(r)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, b); err != nil {
		return fmt.Errorf("take: %w", err)
	}
	return nil
}

// Read reads a take record. A missing file's error wraps fs.ErrNotExist; a
// damaged one says "take.json is damaged".
func Read(path string) (Record, error) {
	var r Record
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s is damaged: %w", filepath.Base(path), err)
	}
	for _, m := range []*MediaRef{r.First, r.Last} {
		normalizeHash(m)
	}
	for i := range r.References {
		normalizeHash(&r.References[i])
		normalizeHash(r.References[i].Sound)
	}
	return r, nil
}

// hashPrefix marked hashes in take folders written before the record had
// one hash format; Read drops it.
const hashPrefix = "sha256:"

func normalizeHash(m *MediaRef) {
	if m != nil {
		m.Hash = strings.TrimPrefix(m.Hash, hashPrefix)
	}
}

// HashFile is the record's content hash of a file: the lower-case hex
// SHA-256 of its bytes.
func HashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
