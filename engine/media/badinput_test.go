package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/testkit"
)

// jpegHeader is SOI + a baseline SOF0 claiming w×h with 3 components + SOS,
// and no scan data.
func jpegHeader(w, h uint16) []byte {
	b := []byte{0xff, 0xd8, 0xff, 0xc0, 0, 17, 8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), 3,
		1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1,
		0xff, 0xda, 0, 12, 3, 1, 0, 2, 0x11, 3, 0x11, 0, 0x3f, 0} // SOS: the header ends here
	return b
}

func write(t *testing.T, dir, name string, data []byte) string {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	good := testkit.ReadFile(t, "testdata/pil/scene_97x53.png")
	goodJPEG, _ := os.ReadFile("testdata/pil/scene_97x53_s2.jpg")
	wav, _ := os.ReadFile("testdata/audio/pcm_i16.wav")
	zeroWAV := append([]byte(nil), wav[:bytes.Index(wav, []byte("data"))+8]...)
	binary.LittleEndian.PutUint32(zeroWAV[len(zeroWAV)-4:], 0)
	truncWAV := wav[:len(wav)/2]
	for _, c := range []struct {
		name string
		data []byte
		want string // substring of the error
		is   error
	}{
		{"notes.png", []byte("just some text, not a picture\n"), "notes.png: not a picture, video or sound file: the name says PNG but the content is text", nil},
		{"noise.jpg", []byte{1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 9}, "the name says JPEG but the content is unrecognised data", nil},
		{"empty.wav", nil, "empty.wav: file is empty", nil},
		{"cut.png", good[:len(good)/2], "cut.png: truncated PNG data", nil},
		{"cut.jpg", goodJPEG[:len(goodJPEG)/3], "cut.jpg: truncated JPEG data", nil},
		{"huge.png", testkit.PNGHeader(20000, 20000), "huge.png: picture is 20000×20000 (400 megapixels); the limit is 120 megapixels", ErrTooLarge},
		{"huge.jpg", jpegHeader(20000, 20000), "picture is 20000×20000", ErrTooLarge},
		{"zero.wav", zeroWAV, "zero.wav: has no audio samples (zero length)", nil},
		{"cut.wav", truncWAV, "cut.wav: truncated WAV data", nil},
		{"sound.png", wav, "", nil}, // content wins: a WAV named .png opens as sound
	} {
		p := write(t, dir, c.name, c.data)
		src, err := Open(p)
		if err == nil && c.want != "" {
			// decoding errors surface when pixels are asked for
			_, err = src.Image(t.Context())
		}
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			} else if src.Info().Kind != KindAudio {
				t.Errorf("%s: kind %v", c.name, src.Info().Kind)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, err, c.want)
		}
		var me *Error
		if err != nil && !errors.As(err, &me) {
			t.Errorf("%s: %T is not a *media.Error", c.name, err)
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("%s: %v is not %v", c.name, err, c.is)
		}
	}
	if _, err := Open(filepath.Join(dir, "absent.png")); err == nil || !strings.Contains(err.Error(), "absent.png: cannot open") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("folder: %v", err)
	}
}

func TestSinksLeaveNothing(t *testing.T) {
	dir := t.TempDir()
	frames := filepath.Join(dir, "frames")
	fs, err := NewFrameSink(frames)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := NewWAVSink(filepath.Join(dir, "take.wav"), PCM16)
	if err != nil {
		t.Fatal(err)
	}
	mem := &MemorySink{}
	s := MultiSink(fs, ws, mem)
	if err := s.Begin(OutputFormat(32, 32, 3)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := s.WriteFrame(testImage(32, 32, i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.WriteAudio(Audio{Rate: SampleRate, Channels: 2, Samples: make([]float32, 2*4000)}); err != nil {
		t.Fatal(err)
	}
	// Abort: no folder (it did not exist), no WAV, no temporary files.
	if err := s.Abort(); err != nil {
		t.Fatal(err)
	}
	if names := testkit.Names(dir); len(names) != 0 {
		t.Errorf("Abort left %v", names)
	}
	// The same, closed: frames and WAV are there, nothing else.
	fs, _ = NewFrameSink(frames)
	ws, _ = NewWAVSink(filepath.Join(dir, "take.wav"), PCM16)
	s = MultiSink(fs, ws)
	s.Begin(OutputFormat(32, 32, 3))
	for i := 0; i < 3; i++ {
		s.WriteFrame(testImage(32, 32, i))
	}
	s.WriteAudio(Audio{Rate: SampleRate, Channels: 2, Samples: make([]float32, 2*4000)})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(frames, "*"))
	if len(names) != 3 || filepath.Base(names[0]) != "frame-00001.png" || filepath.Base(names[2]) != "frame-00003.png" {
		t.Errorf("frames folder holds %v", names)
	}
	got, err := ReadImageFile(names[1])
	if err != nil || got.Pix[0] != testImage(32, 32, 1).Pix[0] {
		t.Errorf("frame 2 reads back wrong: %v", err)
	}
	a, err := ReadWAVFile(filepath.Join(dir, "take.wav"))
	if err != nil || a.Frames() != 4000 || a.Rate != SampleRate {
		t.Errorf("WAV: %v, %d frames", err, a.Frames())
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*")); len(m) != 0 {
		t.Errorf("temporary files: %v", m)
	}
	// A shorter take written over a longer one: the folder holds exactly
	// the new take (no frame 3 of the old one beside frames 1 and 2); other
	// files are left alone.
	os.WriteFile(filepath.Join(frames, "notes.txt"), []byte("mine"), 0o644)
	os.WriteFile(filepath.Join(frames, "frame-7.png"), []byte("not ours"), 0o644)
	fs, _ = NewFrameSink(frames)
	fs.Begin(OutputFormat(32, 32, 2))
	for i := 0; i < 2; i++ {
		fs.WriteFrame(testImage(32, 32, i))
	}
	if err := fs.Close(); err != nil {
		t.Fatal(err)
	}
	names, _ = filepath.Glob(filepath.Join(frames, "*"))
	if len(names) != 4 || filepath.Base(names[2]) != "frame-7.png" || filepath.Base(names[3]) != "notes.txt" {
		t.Errorf("after a shorter take the frames folder holds %v", names)
	}
	// A destination inside a file cannot be created; the error names it.
	if _, err := NewFrameSink(filepath.Join(dir, "take.wav", "x")); err == nil || !strings.Contains(err.Error(), "take.wav") {
		t.Errorf("frames under a file: %v", err)
	}
}

func testImage(w, h, i int) *image.RGBA { return testPattern(w, h, i) }

func testPattern(w, h, i int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for k := 0; k < len(m.Pix); k += 4 {
		m.Pix[k], m.Pix[k+1], m.Pix[k+2], m.Pix[k+3] = uint8(k/4+i*11), uint8(i*40), 77, 255
	}
	return m
}

// TestOutputPermissions: a finished WAV is readable by everyone (0644, not
// the 0600 of its temporary file); one written over an existing file keeps
// that file's permission.
func TestOutputPermissions(t *testing.T) {
	dir := t.TempDir()
	write := func(path string) {
		s, err := NewWAVSink(path, PCM16)
		if err != nil {
			t.Fatal(err)
		}
		s.Begin(OutputFormat(32, 32, 1))
		s.WriteFrame(testImage(32, 32, 0))
		s.WriteAudio(Audio{Rate: SampleRate, Channels: 2, Samples: make([]float32, 2*100)})
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, "take.wav")
	write(p)
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("new WAV: %v %v, want 0644", st.Mode(), err)
	}
	os.Chmod(p, 0o600)
	write(p)
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("replaced WAV: %v %v, want its 0600 kept", st.Mode(), err)
	}
}

// TestCloseAfterRejectedWrite: a sink that refused a frame or a sound
// buffer (wrong size or format) must not save what it had when it is then
// closed instead of aborted (Sink: "after an error, nothing partial is
// left"): Close fails naming the destination and leaves nothing.
func TestCloseAfterRejectedWrite(t *testing.T) {
	type mk func(dir string) (Sink, string, error)
	sinks := map[string]mk{
		"frames": func(dir string) (Sink, string, error) {
			p := filepath.Join(dir, "frames")
			s, err := NewFrameSink(p)
			return s, p, err
		},
		"wav": func(dir string) (Sink, string, error) {
			p := filepath.Join(dir, "take.wav")
			s, err := NewWAVSink(p, PCM16)
			return s, p, err
		},
	}
	if CurrentPlatform().NewMP4Sink != nil && hasFFmpeg() {
		sinks["mp4"] = func(dir string) (Sink, string, error) {
			p := filepath.Join(dir, "take.mp4")
			s, err := NewMP4Sink(p, MP4Options{})
			return s, p, err
		}
	}
	bad := map[string]func(Sink) error{
		"frame size": func(s Sink) error { return s.WriteFrame(testImage(16, 32, 1)) },
		"sound rate": func(s Sink) error {
			return s.WriteAudio(Audio{Rate: 44100, Channels: 2, Samples: make([]float32, 200)})
		},
		"sound shape": func(s Sink) error {
			return s.WriteAudio(Audio{Rate: SampleRate, Channels: 2, Samples: make([]float32, 201)})
		},
	}
	for name, open := range sinks {
		for what, write := range bad {
			t.Run(name+"/"+what, func(t *testing.T) {
				dir := t.TempDir()
				s, dest, err := open(dir)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Begin(OutputFormat(32, 32, 2)); err != nil {
					t.Fatal(err)
				}
				if err := s.WriteFrame(testImage(32, 32, 0)); err != nil {
					t.Fatal(err)
				}
				if err := s.WriteAudio(Audio{Rate: SampleRate, Channels: 2, Samples: make([]float32, 2*1333)}); err != nil {
					t.Fatal(err)
				}
				if err := write(s); err == nil {
					t.Fatalf("the bad write was accepted")
				}
				err = s.Close()
				if err == nil || !strings.Contains(err.Error(), filepath.Base(dest)) {
					t.Errorf("Close after a refused write: %v (want an error naming %s)", err, dest)
				}
				if names := testkit.Names(dir); len(names) != 0 {
					t.Errorf("left behind: %v", names)
				}
			})
		}
	}
}

func hasFFmpeg() bool {
	_, err := exec.LookPath("ffmpeg")
	return err == nil
}
