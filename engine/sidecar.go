package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"h3studio/engine/atomicfile"
)

// Sidecar is the JSON record written next to every output: enough to
// reproduce the take (the fully resolved request and seed) and to judge it
// (timings, peak storage, versions).
type Sidecar struct {
	App        string             `json:"app"`
	AppVersion string             `json:"app_version"`
	Model      string             `json:"model"`
	ModelDir   string             `json:"model_dir"`
	ModelID    string             `json:"model_version,omitempty"`
	Backend    string             `json:"backend"`
	Device     string             `json:"device"`
	Created    time.Time          `json:"created"`
	Task       Task               `json:"task"`
	Request    Request            `json:"request"`
	Seed       uint64             `json:"seed"`
	Frames     int                `json:"frames"`
	FPS        int                `json:"fps"`
	Seconds    float64            `json:"seconds"`
	Width      int                `json:"width"`
	Height     int                `json:"height"`
	SampleRate int                `json:"sample_rate"`
	Channels   int                `json:"channels"`
	Timings    map[Phase]float64  `json:"timings_seconds"`
	Profile    []SidecarPhase     `json:"profile,omitempty"`
	PeakBytes  int64              `json:"peak_bytes"`
	Predicted  int64              `json:"predicted_peak_bytes,omitempty"`
	Memory     MemoryMode         `json:"memory_mode,omitempty"`
	Cached     bool               `json:"text_conditioning_cached"`
	Notes      []string           `json:"notes,omitempty"`
	Inputs     []SidecarInput     `json:"inputs,omitempty"`
	LoRAs      []AppliedLoRA      `json:"loras,omitempty"` // each LoRA: path, sha256, strength, alpha and its source
	Outputs    map[string]string  `json:"outputs,omitempty"`
	Extra      map[string]float64 `json:"extra,omitempty"`
}

// SidecarPhase is one phase's profile in a sidecar.
type SidecarPhase struct {
	Phase      Phase   `json:"phase"`
	Seconds    float64 `json:"seconds"`
	Units      int     `json:"units"`
	Unit       string  `json:"unit"`
	Dispatches int64   `json:"dispatches"`
	GFLOP      float64 `json:"gflop"`
	PeakBytes  int64   `json:"peak_bytes"`
}

// SidecarInput records a conditioning file and its content hash.
type SidecarInput struct {
	Role   string `json:"role"` // "first-frame", "last-frame", "Picture 1", "Video 1", "Audio 1", …
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// NewSidecar fills a sidecar from a finished generation.
func NewSidecar(res Result, appVersion, modelDir string, dev string, backend string) Sidecar {
	r := res.Plan.Request
	sc := Sidecar{
		App: "H3 Studio", AppVersion: appVersion, Model: res.Model, ModelDir: modelDir,
		Backend: backend, Device: dev, Created: time.Now().UTC().Truncate(time.Second),
		Task: res.Plan.Task, Request: r, Seed: res.Seed, Frames: res.Frames, FPS: 24,
		Seconds: float64(res.Frames) / 24, Width: r.Width, Height: r.Height, SampleRate: 32000, Channels: 2,
		Timings: map[Phase]float64{}, PeakBytes: res.PeakBytes, Cached: res.Cached, Notes: res.Plan.Notes,
		ModelID: res.ModelID, Predicted: res.Plan.PeakBytes, Memory: res.Plan.Memory, LoRAs: res.LoRAs,
	}
	for _, p := range res.Profile {
		sc.Profile = append(sc.Profile, SidecarPhase{Phase: p.Phase, Seconds: p.Wall.Seconds(), Units: p.Units, Unit: p.Unit,
			Dispatches: p.Dispatches, GFLOP: p.FLOPs / 1e9, PeakBytes: p.PeakBytes})
	}
	for ph, d := range res.Timings {
		sc.Timings[ph] = d.Seconds()
	}
	add := func(role, path string) {
		if path == "" {
			return
		}
		sum, _ := fileSHA256(path)
		// Absolute, so the record still names the file when read from
		// another folder (the sidecar lies beside the output, not where
		// the command ran).
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		sc.Inputs = append(sc.Inputs, SidecarInput{Role: role, Path: path, SHA256: sum})
	}
	add("first-frame", r.First)
	add("last-frame", r.Last)
	for _, l := range ReferenceLabels(r.References) {
		add(l.Label, l.Path)
		if l.Audio != "" {
			add(l.Label+" sound", l.Audio)
		}
	}
	return sc
}

// ReferenceLabel is a reference with the label the model sees.
type ReferenceLabel struct {
	Label string // "Picture 1", "Video 2", "Audio 1"
	Path  string
	Audio string
}

// ReferenceLabels numbers references per kind in request order: images are
// Pictures, videos are Videos and standalone audio clips are Audios.
func ReferenceLabels(refs []Reference) []ReferenceLabel {
	var pic, vid, aud int
	out := make([]ReferenceLabel, 0, len(refs))
	for _, r := range refs {
		var l string
		switch r.Kind {
		case RefImage:
			pic++
			l = fmt.Sprintf("Picture %d", pic)
		case RefVideo, RefSilentVideo, RefVideoAudio:
			vid++
			l = fmt.Sprintf("Video %d", vid)
		case RefAudio:
			aud++
			l = fmt.Sprintf("Audio %d", aud)
		}
		out = append(out, ReferenceLabel{Label: l, Path: r.Path, Audio: r.Audio})
	}
	return out
}

func fileSHA256(path string) (string, error) {
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

// WriteSidecar writes sc as indented JSON to path atomically (a temporary
// file in the same folder, synced, then renamed).
func WriteSidecar(path string, sc Sidecar) error {
	b, err := json.MarshalIndent(sc, "", "  ")
	if err != nil {
		return fmt.Errorf("engine: sidecar: %w", err)
	}
	return WriteFileAtomic(path, append(b, '\n'))
}

// WriteFileAtomic writes data to path through a temporary file and a rename,
// so a reader never sees a partial file and a failure leaves nothing behind.
func WriteFileAtomic(path string, data []byte) error {
	if err := atomicfile.WriteFile(path, data); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	return nil
}
