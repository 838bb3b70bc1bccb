// Package sound plays a take's sound through the system's audio output with
// github.com/ebitengine/oto/v3 (AudioToolbox on macOS, ALSA on Linux), and
// serves as the player's clock so frames follow the sound.
//
// The device is opened only when playback first starts, never at launch.
// When there is no output device (a CI machine, a server), or the device
// does not consume sound, playback goes on silently: Position reports no
// clock, the player keeps time itself, and Notice says why.
package sound

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ebitengine/oto/v3"

	"h3studio/engine/media"
)

// Output plays one clip's sound at a time. Its methods are called on the UI
// goroutine and never block on the device.
type Output struct {
	mu     sync.Mutex
	pcm    []byte // float32 LE interleaved stereo at media.SampleRate
	player *oto.Player
	reader *countingReader
	from   time.Duration
	start  time.Time
	notice string
	// OnNotice runs when a notice appears (on whichever goroutine noticed).
	OnNotice func(string)
}

var (
	ctxOnce sync.Once
	ctx     *oto.Context
	ctxErr  error
)

const bytesPerSecond = media.SampleRate * media.NumChannels * 4

// SetAudio sets the clip's sound (any rate or layout is converted to
// 32 kHz stereo); an empty Audio makes the clip silent.
func (o *Output) SetAudio(a media.Audio) {
	o.Stop()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.pcm = toPCM(a)
}

// Notice is why playback is silent ("" when it is not).
func (o *Output) Notice() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.notice
}

// Start plays from a position.
func (o *Output) Start(from time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stopLocked()
	if len(o.pcm) == 0 {
		return
	}
	c, err := context()
	if err != nil {
		o.setNoticeLocked("No sound output: " + err.Error() + " — playing silently.")
		return
	}
	off := int64(from.Seconds()*bytesPerSecond) / 8 * 8
	if off >= int64(len(o.pcm)) {
		return
	}
	o.reader = &countingReader{r: bytes.NewReader(o.pcm[off:])}
	o.player = c.NewPlayer(o.reader)
	o.player.SetBufferSize(bytesPerSecond / 10)
	o.from, o.start = from, time.Now()
	o.player.Play()
}

// Stop pauses the sound.
func (o *Output) Stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stopLocked()
}

func (o *Output) stopLocked() {
	if o.player != nil {
		o.player.Pause() // oto ≥ 3.4 players need no Close
		o.player, o.reader = nil, nil
	}
}

// Position is how far the sound has actually been played. ok is false when
// nothing plays, or when the device has not consumed anything a while after
// starting (a dead device): the player then keeps time itself.
func (o *Output) Position() (time.Duration, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.player == nil || o.reader == nil {
		return 0, false
	}
	played := o.reader.n.Load() - int64(o.player.BufferedSize())
	if played <= 0 {
		if time.Since(o.start) > 750*time.Millisecond {
			o.setNoticeLocked("The sound output does not play — playing silently.")
			o.stopLocked()
		}
		return 0, false
	}
	return o.from + time.Duration(float64(played)/bytesPerSecond*float64(time.Second)), true
}

func (o *Output) setNoticeLocked(s string) {
	if o.notice == s {
		return
	}
	o.notice = s
	if o.OnNotice != nil {
		go o.OnNotice(s)
	}
}

type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// ErrNoDevice means the machine has no sound output.
var ErrNoDevice = errors.New("this machine has no sound output device")

// context opens the process's one audio context the first time sound
// plays. On Linux it first checks that ALSA has a card or a configured
// default (an ALSA context with no device never plays and never reports an
// error).
func context() (*oto.Context, error) {
	ctxOnce.Do(func() {
		if !HasDevice() {
			ctxErr = ErrNoDevice
			return
		}
		c, ready, err := oto.NewContext(&oto.NewContextOptions{
			SampleRate: media.SampleRate, ChannelCount: media.NumChannels, Format: oto.FormatFloat32LE,
			BufferSize: 100 * time.Millisecond,
		})
		if err != nil {
			ctxErr = err
			return
		}
		select {
		case <-ready:
			ctx = c
		case <-time.After(2 * time.Second):
			ctxErr = errors.New("the sound device did not start")
		}
	})
	return ctx, ctxErr
}

// HasDevice reports whether the machine appears to have a sound output.
// macOS always has one (a Mac without speakers still has a null device);
// on Linux, ALSA must list a card or have a configured default (such as the
// null device CI machines can configure in ~/.asoundrc).
func HasDevice() bool {
	if runtime.GOOS != "linux" {
		return true
	}
	if b, err := os.ReadFile("/proc/asound/cards"); err == nil && !strings.Contains(string(b), "no soundcards") && strings.TrimSpace(string(b)) != "" {
		return true
	}
	home, _ := os.UserHomeDir()
	for _, p := range []string{filepath.Join(home, ".asoundrc"), "/etc/asound.conf"} {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), "pcm.!default") {
			return true
		}
	}
	return false
}

// toPCM converts a sound to float32 LE stereo at the output rate (nearest
// sample; every take is already 32 kHz stereo).
func toPCM(a media.Audio) []byte {
	n := a.Frames()
	if n == 0 || a.Rate <= 0 {
		return nil
	}
	outN := int(int64(n) * media.SampleRate / int64(a.Rate))
	b := make([]byte, 0, outN*8)
	for i := 0; i < outN; i++ {
		src := int(int64(i) * int64(a.Rate) / media.SampleRate)
		l := a.Samples[src*a.Channels]
		r := l
		if a.Channels > 1 {
			r = a.Samples[src*a.Channels+1]
		}
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(l))
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(r))
	}
	return b
}
