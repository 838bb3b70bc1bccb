package media

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"
)

// WAV (RIFF/RF64 WAVE) reading and writing. Read: PCM 8 (unsigned), 16,
// 24 and 32 bit, IEEE float 32 and 64 bit, plain or WAVE_FORMAT_EXTENSIBLE,
// any channel count; samples become float32 in [-1, 1] as v/2^(bits−1)
// (soundfile's and torchaudio's convention). Write: PCM16, PCM24 or float32.

// SampleFormat is a WAV sample encoding.
type SampleFormat uint8

// Sample formats.
const (
	PCM16   SampleFormat = iota // 16-bit signed integer (the default)
	PCM24                       // 24-bit signed integer
	Float32                     // IEEE 754 float
)

func (f SampleFormat) bits() int {
	switch f {
	case PCM24:
		return 24
	case Float32:
		return 32
	}
	return 16
}

// Limits on decoded audio.
const (
	MaxAudioChannels = 32
	MaxAudioSeconds  = 30 * 60 // longer files are refused rather than decoded
)

// DecodeWAV decodes a WAV file's bytes; path names it in errors.
func DecodeWAV(path string, data []byte) (Audio, error) {
	l, err := parseWAV(path, data, int64(len(data)))
	if err != nil {
		return Audio{}, err
	}
	return l.decode(data[l.dataOff : l.dataOff+l.dataLen]), nil
}

// wavLayout is what a WAV header says: the sample encoding and where the
// samples are.
type wavLayout struct {
	rate, ch, bits   int
	conv             func([]byte) float32
	dataOff, dataLen int64
}

func (l wavLayout) frames() int64 { return l.dataLen / int64(l.ch*l.bits/8) }

func (l wavLayout) info() Info {
	return Info{Kind: KindAudio, Duration: time.Duration(l.frames()) * time.Second / time.Duration(l.rate), HasAudio: true,
		SampleRate: l.rate, Channels: l.ch, Format: FormatWAV, Codec: "pcm"}
}

// decode converts the sample bytes (dataLen of them).
func (l wavLayout) decode(samples []byte) Audio {
	bps := l.bits / 8
	out := Audio{Rate: l.rate, Channels: l.ch, Samples: make([]float32, l.frames()*int64(l.ch))}
	for i := range out.Samples {
		v := l.conv(samples[i*bps:])
		if v != v { // NaN in float files
			v = 0
		}
		out.Samples[i] = v
	}
	return out
}

// errWAVHead: the header runs past the bytes given to parseWAV.
var errWAVHead = errors.New("media: WAV header beyond the bytes read")

// parseWAV reads a WAV header from head, the first bytes of a file of
// size bytes (all of it, or a prefix: it then fails with errWAVHead when
// the chunks before the samples do not fit), and checks the layout and
// the duration limit without decoding a sample.
func parseWAV(path string, head []byte, size int64) (wavLayout, error) {
	data := head
	if f, _ := Sniff(data); f != FormatWAV {
		return wavLayout{}, notKind(path, f, "a WAV file")
	}
	var (
		fmtChunk   []byte
		l          wavLayout
		haveData   bool
		declared64 uint64
	)
	rf64 := string(data[:4]) == "RF64"
	for off := int64(12); ; {
		if off+8 > int64(len(data)) {
			if off+8 <= size {
				return wavLayout{}, errWAVHead
			}
			break
		}
		id := string(data[off : off+4])
		n := uint64(binary.LittleEndian.Uint32(data[off+4:]))
		body := off + 8
		if id == "ds64" {
			if int64(len(data)) < body+16 {
				if body+16 <= size {
					return wavLayout{}, errWAVHead
				}
			} else {
				declared64 = binary.LittleEndian.Uint64(data[body+8:])
			}
		}
		if id == "data" {
			if rf64 && n == 0xffffffff && declared64 > 0 {
				n = declared64
			}
			avail := uint64(size - body)
			switch {
			case n == 0 && avail > 0, n > avail && isStreamingSize(n):
				n = avail // streaming writers leave the size open
			case n > avail:
				return wavLayout{}, fileErr(path, nil, "truncated WAV data: the header promises %d bytes of samples, the file holds %d", n, avail)
			}
			l.dataOff, l.dataLen, haveData = body, int64(n), true
			break
		}
		if n > uint64(size-body) {
			return wavLayout{}, fileErr(path, nil, "truncated WAV data: chunk %q is cut short", id)
		}
		if id == "fmt " {
			if body+int64(n) > int64(len(data)) {
				return wavLayout{}, errWAVHead
			}
			fmtChunk = data[body : body+int64(n)]
		}
		off = body + int64(n) + int64(n&1)
	}
	if len(fmtChunk) < 16 {
		return wavLayout{}, fileErr(path, nil, "corrupt WAV data: no format chunk before the samples")
	}
	if !haveData {
		return wavLayout{}, fileErr(path, nil, "corrupt WAV data: no sample data chunk")
	}
	tag := binary.LittleEndian.Uint16(fmtChunk)
	l.ch = int(binary.LittleEndian.Uint16(fmtChunk[2:]))
	l.rate = int(binary.LittleEndian.Uint32(fmtChunk[4:]))
	l.bits = int(binary.LittleEndian.Uint16(fmtChunk[14:]))
	if tag == 0xfffe && len(fmtChunk) >= 26 {
		tag = binary.LittleEndian.Uint16(fmtChunk[24:])
	}
	if l.ch < 1 || l.ch > MaxAudioChannels {
		return wavLayout{}, fileErr(path, ErrUnsupported, "WAV with %d channels", l.ch)
	}
	if l.rate < 1000 || l.rate > 768000 {
		return wavLayout{}, fileErr(path, ErrUnsupported, "WAV sample rate %d Hz", l.rate)
	}
	switch {
	case tag == 1 && l.bits == 8:
		l.conv = func(b []byte) float32 { return (float32(b[0]) - 128) / 128 }
	case tag == 1 && l.bits == 16:
		l.conv = func(b []byte) float32 { return float32(int16(binary.LittleEndian.Uint16(b))) / (1 << 15) }
	case tag == 1 && l.bits == 24:
		l.conv = func(b []byte) float32 {
			v := int32(uint32(b[0])<<8|uint32(b[1])<<16|uint32(b[2])<<24) >> 8
			return float32(v) / (1 << 23)
		}
	case tag == 1 && l.bits == 32:
		l.conv = func(b []byte) float32 { return float32(float64(int32(binary.LittleEndian.Uint32(b))) / (1 << 31)) }
	case tag == 3 && l.bits == 32:
		l.conv = func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }
	case tag == 3 && l.bits == 64:
		l.conv = func(b []byte) float32 { return float32(math.Float64frombits(binary.LittleEndian.Uint64(b))) }
	default:
		return wavLayout{}, fileErr(path, ErrUnsupported, "WAV encoding not supported (format tag %#x, %d bits); use PCM 8/16/24/32-bit or float", tag, l.bits)
	}
	frames := l.frames()
	if frames == 0 {
		return wavLayout{}, fileErr(path, nil, "has no audio samples (zero length)")
	}
	if frames/int64(l.rate) > MaxAudioSeconds {
		return wavLayout{}, fileErr(path, ErrTooLarge, "audio is %d s long; the limit is %d s", frames/int64(l.rate), MaxAudioSeconds)
	}
	return l, nil
}

func isStreamingSize(size uint64) bool { return size >= 0x7fffffff }

// ReadWAVFile reads a WAV file.
func ReadWAVFile(path string) (Audio, error) {
	// The header first: a file over the limits, or broken, is refused
	// before gigabytes of samples are read.
	if _, err := probeWAV(path); err != nil {
		return Audio{}, err
	}
	data, err := readFileLimited(path, 4<<30)
	if err != nil {
		return Audio{}, err
	}
	return DecodeWAV(path, data)
}

// probeWAV reads a WAV file's header (from its first megabyte, or the
// whole file when the chunks before the samples are longer).
func probeWAV(path string) (wavLayout, error) {
	head, err := readHead(path, 1<<20)
	if err != nil {
		return wavLayout{}, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return wavLayout{}, fileErr(path, err, "cannot read")
	}
	l, err := parseWAV(path, head, st.Size())
	if errors.Is(err, errWAVHead) {
		data, rerr := readFileLimited(path, 4<<30)
		if rerr != nil {
			return wavLayout{}, rerr
		}
		l, err = parseWAV(path, data, int64(len(data)))
	}
	return l, err
}

// wavWriter streams samples after a header whose sizes are patched at the end.
type wavWriter struct {
	w      io.WriteSeeker
	format SampleFormat
	ch     int
	bytes  int64
	buf    []byte
}

func newWAVWriter(w io.WriteSeeker, rate, channels int, f SampleFormat) (*wavWriter, error) {
	ww := &wavWriter{w: w, format: f, ch: channels}
	return ww, ww.header(rate)
}

func (w *wavWriter) header(rate int) error {
	bits := w.format.bits()
	tag := uint16(1)
	if w.format == Float32 {
		tag = 3
	}
	h := make([]byte, 44)
	copy(h, "RIFF")
	copy(h[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:], 16)
	binary.LittleEndian.PutUint16(h[20:], tag)
	binary.LittleEndian.PutUint16(h[22:], uint16(w.ch))
	binary.LittleEndian.PutUint32(h[24:], uint32(rate))
	binary.LittleEndian.PutUint32(h[28:], uint32(rate*w.ch*bits/8))
	binary.LittleEndian.PutUint16(h[32:], uint16(w.ch*bits/8))
	binary.LittleEndian.PutUint16(h[34:], uint16(bits))
	copy(h[36:], "data")
	_, err := w.w.Write(h)
	return err
}

func (w *wavWriter) write(s []float32) error {
	bps := w.format.bits() / 8
	if cap(w.buf) < len(s)*bps {
		w.buf = make([]byte, len(s)*bps)
	}
	b := w.buf[:len(s)*bps]
	for i, v := range s {
		switch w.format {
		case Float32:
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		case PCM24:
			q := quantize(v, 1<<23)
			b[3*i], b[3*i+1], b[3*i+2] = byte(q), byte(q>>8), byte(q>>16)
		default:
			binary.LittleEndian.PutUint16(b[2*i:], uint16(int16(quantize(v, 1<<15))))
		}
	}
	if w.bytes+int64(len(b)) > math.MaxUint32-64 {
		return fmt.Errorf("WAV data over 4 GB")
	}
	n, err := w.w.Write(b)
	w.bytes += int64(n)
	return err
}

// quantize maps [-1, 1] to a signed integer of full scale fs, rounding to
// nearest and clipping.
func quantize(v float32, fs int32) int32 {
	x := math.RoundToEven(float64(v) * float64(fs))
	if x > float64(fs-1) {
		return fs - 1
	}
	if x < float64(-fs) {
		return -fs
	}
	return int32(x)
}

func (w *wavWriter) finish() error {
	pad := w.bytes & 1
	if pad == 1 {
		if _, err := w.w.Write([]byte{0}); err != nil {
			return err
		}
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(36+w.bytes+pad))
	if _, err := w.w.Seek(4, io.SeekStart); err != nil {
		return err
	}
	if _, err := w.w.Write(b[:]); err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(b[:], uint32(w.bytes))
	if _, err := w.w.Seek(40, io.SeekStart); err != nil {
		return err
	}
	_, err := w.w.Write(b[:])
	return err
}

// WriteWAVFile writes a whole Audio to path atomically.
func WriteWAVFile(path string, a Audio, f SampleFormat) error {
	af, err := createAtomic(path)
	if err != nil {
		return err
	}
	w, err := newWAVWriter(af.f, a.Rate, a.Channels, f)
	if err == nil {
		err = w.write(a.Samples)
	}
	if err == nil {
		err = w.finish()
	}
	if err != nil {
		af.abort()
		return fileErr(path, err, "cannot write WAV (is the disk full?)")
	}
	return af.commit()
}
