package sound

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"h3studio/engine/media"
	"h3studio/engine/testkit"
)

func tone(secs float64) media.Audio {
	n := int(secs * media.SampleRate)
	a := media.Audio{Rate: media.SampleRate, Channels: 2, Samples: make([]float32, 2*n)}
	for i := range a.Samples {
		a.Samples[i] = 0.1
	}
	return a
}

func TestToPCM(t *testing.T) {
	if got := len(toPCM(tone(0.5))); got != 0.5*bytesPerSecond {
		t.Errorf("pcm bytes %d", got)
	}
	mono := media.Audio{Rate: 16000, Channels: 1, Samples: make([]float32, 16000)}
	if got := len(toPCM(mono)); got != bytesPerSecond {
		t.Errorf("resampled pcm bytes %d, want %d", got, bytesPerSecond)
	}
	if toPCM(media.Audio{}) != nil {
		t.Error("silence made sound")
	}
}

// TestPlayback runs in a child process (the audio context is one per
// process): with no device it plays silently with a notice, never hanging;
// with ALSA's null device it plays and the clock advances.
func TestPlayback(t *testing.T) {
	if mode := os.Getenv("H3_SOUND_CHILD"); mode != "" {
		child(t, mode)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("sound: the device probes are Linux's (ALSA)")
	}
	for _, mode := range []string{"none", "null"} {
		home := t.TempDir()
		if mode == "null" {
			os.WriteFile(filepath.Join(home, ".asoundrc"), []byte("pcm.!default { type null }\nctl.!default { type hw card 0 }\n"), 0o644)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestPlayback$", "-test.v")
		cmd.Env = append(os.Environ(), "H3_SOUND_CHILD="+mode, "HOME="+home)
		done := make(chan struct{})
		var out []byte
		var err error
		go func() { out, err = cmd.CombinedOutput(); close(done) }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%s: playback hung", mode)
		}
		if err != nil || !strings.Contains(string(out), "PASS") {
			t.Errorf("%s: %v\n%s", mode, err, out)
		}
	}
}

func child(t *testing.T, mode string) {
	if mode == "none" && HasDevice() {
		t.Skip("sound: this machine has a sound card")
	}
	var o Output
	o.SetAudio(tone(2))
	o.Start(500 * time.Millisecond)
	var pos time.Duration
	var playing bool
	testkit.Until(nil, func() bool { pos, playing = o.Position(); return playing || o.Notice() != "" })
	if playing {
		if mode == "none" {
			t.Fatalf("a clock without a device: %v", pos)
		}
		if pos < 500*time.Millisecond {
			t.Fatalf("position %v before the start", pos)
		}
		o.Stop()
		return
	}
	if mode == "null" {
		t.Fatalf("the null device never played: %q", o.Notice())
	}
	if !strings.Contains(o.Notice(), "playing silently") {
		t.Fatalf("notice %q", o.Notice())
	}
}
