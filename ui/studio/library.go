package studio

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"

	"h3studio/engine/media"
	"h3studio/engine/take"
)

// The library is a folder with one folder per take. Every file of a take is
// written inside a hidden staging folder first and the folder is renamed into
// place only when everything is written, so the library never holds half a
// take, and existing takes are never rewritten except take.json (atomically,
// for the star). The library view is built from these files alone.
const (
	TakeMetaFile = take.File
	VideoFile    = "video.mp4"    // H.264 + AAC (when the build has an MP4 writer)
	AudioFile    = "audio.wav"    // 32 kHz stereo, 16-bit PCM
	ThumbFile    = "thumb.png"    // middle frame, ≤ 320 px
	LastFile     = "last.png"     // last frame at full size, for chaining
	ViewerFile   = "viewer.mjpeg" // motion-JPEG proxy at ≤ 960 px, for the viewer
	stagingPre   = ".h3-staging-"
	thumbEdge    = 320
)

// The take record (engine/take) and its parts, as the library uses them.
type (
	TakeMeta     = take.Record
	MediaRef     = take.MediaRef
	MediaShape   = take.MediaShape
	TakeSettings = take.Settings
	TakeFiles    = take.Files
	AppInfo      = take.AppInfo
	ModelRef     = take.ModelRef
)

// Take is one take folder.
type Take struct {
	ID    string // folder name
	Dir   string
	Meta  TakeMeta
	Thumb image.Image // nil when missing
	// Damaged says why take.json could not be read; the folder is still
	// listed (never deleted) so the user can look at it.
	Damaged string
}

// Has reports whether a take file exists.
func (t Take) Has(name string) bool {
	_, err := os.Stat(filepath.Join(t.Dir, name))
	return err == nil
}

// Library is a library folder. Its methods are safe for concurrent use as
// long as no two of them change the same take.
type Library struct {
	Dir   string
	trash func(path string) error
}

// OpenLibrary opens (creating if needed) a library folder and finishes or
// clears staging folders left by a crash: a staging folder with a complete
// take.json is moved into place, anything else is removed (it was never a
// take).
func OpenLibrary(dir string, trash func(string) error) (*Library, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("studio: library %s: %w", dir, err)
	}
	if trash == nil {
		trash = MoveToTrash
	}
	l := &Library{Dir: dir, trash: trash}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("studio: library %s: %w", dir, err)
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), stagingPre) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if m, err := readMeta(p); err == nil {
			if _, err := l.place(p, m); err == nil {
				continue
			}
		}
		os.RemoveAll(p)
	}
	return l, nil
}

// stage makes a new staging folder.
func (l *Library) stage() (string, error) {
	var b [6]byte
	rand.Read(b[:])
	p := filepath.Join(l.Dir, stagingPre+hex.EncodeToString(b[:]))
	if err := os.Mkdir(p, 0o755); err != nil {
		return "", fmt.Errorf("studio: library: %w", err)
	}
	return p, nil
}

// commit writes take.json into a staging folder and moves the folder into
// place. On failure the staging folder is removed and the library is as
// before.
func (l *Library) commit(staging string, m TakeMeta) (Take, error) {
	if err := writeMeta(staging, m); err != nil {
		os.RemoveAll(staging)
		return Take{}, err
	}
	t, err := l.place(staging, m)
	if err != nil {
		os.RemoveAll(staging)
	}
	return t, err
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

// place renames a complete staging folder to its take name.
func (l *Library) place(staging string, m TakeMeta) (Take, error) {
	slug := strings.Trim(slugRE.ReplaceAllString(strings.ToLower(m.Title), "-"), "-")
	if len(slug) > 32 {
		slug = strings.TrimRight(slug[:32], "-")
	}
	if slug == "" {
		slug = "take"
	}
	base := fmt.Sprintf("%s-%s-s%d", m.Created.Local().Format("2006-01-02-150405"), slug, m.Seed)
	name := base
	for i := 2; ; i++ {
		dst := filepath.Join(l.Dir, name)
		if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
			if err := os.Rename(staging, dst); err != nil {
				return Take{}, fmt.Errorf("studio: library: %w", err)
			}
			t := Take{ID: name, Dir: dst, Meta: m}
			t.Thumb = loadThumb(dst)
			return t, nil
		}
		name = fmt.Sprintf("%s-%d", base, i)
	}
}

// List reads every take, newest first. Folders whose take.json cannot be
// read are listed as damaged.
func (l *Library) List() ([]Take, error) {
	ents, err := os.ReadDir(l.Dir)
	if err != nil {
		return nil, fmt.Errorf("studio: library %s: %w", l.Dir, err)
	}
	var ts []Take
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		t, ok := l.Load(e.Name())
		if ok {
			ts = append(ts, t)
		}
	}
	sort.SliceStable(ts, func(i, j int) bool {
		if !ts[i].Meta.Created.Equal(ts[j].Meta.Created) {
			return ts[i].Meta.Created.After(ts[j].Meta.Created)
		}
		return ts[i].ID > ts[j].ID
	})
	return ts, nil
}

// Load reads one take folder; ok is false when it is not a take folder at
// all (no take.json and no media).
func (l *Library) Load(id string) (Take, bool) {
	dir := filepath.Join(l.Dir, id)
	t := Take{ID: id, Dir: dir}
	m, err := readMeta(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !t.Has(VideoFile) && !t.Has(ViewerFile) {
			return t, false
		}
		t.Damaged = "take.json is missing"
	case err != nil:
		t.Damaged = err.Error()
	}
	if t.Damaged != "" {
		st, _ := os.Stat(dir)
		if st != nil {
			m.Created = st.ModTime()
		}
		m.Title = id
	}
	t.Meta = m
	t.Thumb = loadThumb(dir)
	return t, true
}

func readMeta(dir string) (TakeMeta, error) {
	return take.Read(filepath.Join(dir, TakeMetaFile))
}

// A take folder's thumbnail is decoded only within these bounds: the
// studio writes ≤ 320 px, and a larger one (a file replaced by hand, an
// export from another tool) is decoded and downscaled to that size as long
// as its header claims at most maxThumbPixels (64 MiB decoded) and the file
// is at most maxThumbBytes. Beyond that it is refused unread (a 20000²
// header would allocate gigabytes), so listing the library stays bounded
// in time and memory whatever its folders hold.
const (
	maxThumbSide   = 16384
	maxThumbPixels = 4096 * 4096
	maxThumbBytes  = 64 << 20
)

// loadThumb reads a take's thumbnail, downscaled to at most thumbEdge, or
// nil when it is missing, damaged or over the bounds above (judged from the
// file size and the PNG header, before decoding). It runs on a worker,
// never the UI thread.
func loadThumb(dir string) image.Image {
	f, err := os.Open(filepath.Join(dir, ThumbFile))
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() > maxThumbBytes {
		return nil
	}
	cfg, err := png.DecodeConfig(f)
	if err != nil || !thumbDecodable(cfg.Width, cfg.Height) {
		return nil
	}
	if _, err := f.Seek(0, 0); err != nil {
		return nil
	}
	img, err := png.Decode(f)
	if err != nil {
		return nil
	}
	if b := img.Bounds(); b.Dx() <= thumbEdge && b.Dy() <= thumbEdge {
		return img
	}
	return Scale(img, thumbEdge, thumbEdge)
}

// thumbDecodable says whether a thumbnail of w×h pixels is within the
// bounds the library decodes.
func thumbDecodable(w, h int) bool {
	return w > 0 && h > 0 && w <= maxThumbSide && h <= maxThumbSide && int64(w)*int64(h) <= maxThumbPixels
}

// SetStarred rewrites a take's take.json with its star.
func (l *Library) SetStarred(t Take, on bool) (Take, error) {
	if t.Damaged != "" {
		return t, errors.New("studio: take.json is damaged; the star can't be saved")
	}
	t.Meta.Starred = on
	if err := writeMeta(t.Dir, t.Meta); err != nil {
		return t, err
	}
	return t, nil
}

// Delete moves a take folder to the Trash.
func (l *Library) Delete(t Take) error {
	if filepath.Dir(t.Dir) != filepath.Clean(l.Dir) {
		return fmt.Errorf("studio: %s is not in the library", t.Dir)
	}
	return l.trash(t.Dir)
}

// LoadClip reads a take's viewer proxy and sound.
func (l *Library) LoadClip(t Take) (*Clip, error) {
	b, err := os.ReadFile(filepath.Join(t.Dir, ViewerFile))
	if err != nil {
		return nil, fmt.Errorf("studio: %s: the viewer frames can't be read: %w", t.ID, err)
	}
	frames, err := SplitMJPEG(b)
	if err != nil && len(frames) == 0 {
		return nil, fmt.Errorf("studio: %s: %w", t.ID, err)
	}
	var a media.Audio
	if t.Has(AudioFile) {
		a, _ = ReadWAVFile(filepath.Join(t.Dir, AudioFile)) // a damaged sound plays silent
	}
	w, h := t.Meta.Width, t.Meta.Height
	if w == 0 || h == 0 {
		if img, err := decodeJPEG(frames[0]); err == nil {
			w, h = img.Bounds().Dx(), img.Bounds().Dy()
		}
	}
	return NewClip(w, h, frames, a), nil
}

// writeMeta writes a take folder's take.json atomically, through the
// library's file creator.
func writeMeta(dir string, m TakeMeta) error {
	b, err := take.Encode(m)
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, TakeMetaFile), func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// createFile is os.Create; tests replace it to simulate a full disk.
var createFile = func(path string) (io.WriteCloser, error) { return os.Create(path) }

// writeFileAtomic writes a file through a temporary name in the same folder
// and renames it into place; on any error nothing is left behind.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	f, err := createFile(tmp)
	if err != nil {
		return describeWriteError(path, err)
	}
	err = write(f)
	if s, ok := f.(interface{ Sync() error }); ok && err == nil {
		err = s.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return describeWriteError(path, err)
	}
	return nil
}

// ErrDiskFull marks a write that failed for lack of space.
var ErrDiskFull = errors.New("the disk is full")

// diskError marks a media-layer write error that ran out of space.
func diskError(name string, err error) error {
	if err != nil && (errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)) {
		return fmt.Errorf("studio: %s: %w (%v)", name, ErrDiskFull, err)
	}
	return err
}

func describeWriteError(path string, err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("studio: %s: %w (%v)", filepath.Base(path), ErrDiskFull, err)
	}
	return fmt.Errorf("studio: %s: %w", filepath.Base(path), err)
}

// copyFileAtomic copies src to dst atomically (exports).
func copyFileAtomic(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeFileAtomic(dst, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}

func writePNGAtomic(path string, img image.Image) error {
	return writeFileAtomic(path, func(w io.Writer) error {
		return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(w, img)
	})
}
