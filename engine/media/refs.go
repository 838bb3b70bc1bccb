package media

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"strings"
	"time"
)

// Ref is one Ref2VA reference as the limits see it: the slot it was given
// for and what its file(s) hold (Source.Info).
type Ref struct {
	Kind       Kind   // the slot: KindImage, KindVideo or KindAudio
	Path       string // the file
	Info       Info   // what the file holds
	Soundtrack bool   // a video whose own sound track conditions the generation
	AudioPath  string // a video paired with a separate sound file (replaces its track)
	AudioInfo  Info
}

// Limits are the release's reference limits (H3 README; spec §10.5,
// H3-DIT §12.3).
type Limits struct {
	MaxImages, MaxVideos, MaxAudioClips, MaxFiles int
	MinClip, MaxClip, MaxTotal                    time.Duration // per video/audio clip; total per modality
}

// DefaultLimits: ≤ 9 images, ≤ 3 videos and ≤ 3 audio clips of 2–15 s
// each, at most 15 s of video and 15 s of audio clips in total, ≤ 12 files.
var DefaultLimits = Limits{MaxImages: 9, MaxVideos: 3, MaxAudioClips: 3, MaxFiles: 12,
	MinClip: 2 * time.Second, MaxClip: 15 * time.Second, MaxTotal: 15 * time.Second}

// RefProblem is one broken rule: the rule in words and, when one file is
// at fault, the file.
type RefProblem struct {
	Index int    // 0-based reference index, −1 when the rule is about the whole set
	Path  string // the file at fault, "" for set-wide rules
	Rule  string
	// Fix says what the user can do about it, in a short sentence ("" when
	// there is no general advice).
	Fix string
}

func (p RefProblem) String() string {
	if p.Path == "" {
		return p.Rule
	}
	return fmt.Sprintf("reference %d (%s): %s", p.Index+1, p.Path, p.Rule)
}

// RefError lists every broken reference rule.
type RefError struct{ Problems []RefProblem }

func (e *RefError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return "media: references: " + strings.Join(parts, "; ")
}

func dur(i Info) time.Duration {
	if i.Duration > 0 {
		return i.Duration
	}
	if i.FPS > 0 && i.Frames > 0 {
		return time.Duration(float64(i.Frames) / i.FPS * float64(time.Second))
	}
	return 0
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

var kindWord = map[Kind]string{KindImage: "a picture", KindVideo: "a video", KindAudio: "a sound file"}

// CheckReferences checks an ordered Ref2VA reference list against l, and
// that it is not combined with first/last keyframes. It returns a
// *RefError naming every broken rule and the file concerned, or nil.
func CheckReferences(refs []Ref, hasKeyframes bool, l Limits) error {
	var ps []RefProblem
	add := func(i int, path, fix, format string, args ...any) {
		ps = append(ps, RefProblem{Index: i, Path: path, Rule: fmt.Sprintf(format, args...), Fix: fix})
	}
	const (
		fewerRefs  = "Remove some references."
		shorter    = "Use shorter or fewer clips."
		crop       = "Crop it, or use another."
		otherSound = "Use another sound file."
	)
	if len(refs) > 0 && hasKeyframes {
		add(-1, "", "Remove the references or the frames.", "references cannot be combined with a first or last frame (use one or the other)")
	}
	var images, videos, clips, files int
	var videoTotal, audioTotal time.Duration
	clip := func(i int, path, what string, d time.Duration) {
		if d < l.MinClip || d > l.MaxClip {
			add(i, path, "Trim it, or use another clip.", "%s must be %s–%s long; this one is %s", what, secs(l.MinClip), secs(l.MaxClip), secs(d))
		}
	}
	for i, r := range refs {
		files++
		if r.Info.Kind != r.Kind && r.Info.Kind != 0 {
			add(i, r.Path, "", "is %s, but was given as %s reference", kindWord[r.Info.Kind], strings.TrimPrefix(kindWord[r.Kind], "a "))
			continue
		}
		switch r.Kind {
		case KindImage:
			images++
			if w, h := r.Info.Width, r.Info.Height; w > 4*h || h > 4*w {
				add(i, r.Path, crop, "pictures must be between 1:4 and 4:1; this one is %d×%d", w, h)
			}
		case KindVideo:
			videos++
			d := dur(r.Info)
			videoTotal += d
			clip(i, r.Path, "reference videos", d)
			if w, h := r.Info.Width, r.Info.Height; w > 4*h || h > 4*w {
				add(i, r.Path, crop, "videos must be between 1:4 and 4:1; this one is %d×%d", w, h)
			}
			switch {
			case r.AudioPath != "":
				files++
				clips++
				if r.AudioInfo.Kind != 0 && !r.AudioInfo.HasAudio {
					add(i, r.AudioPath, otherSound, "has no sound to pair with the video")
				}
				ad := dur(r.AudioInfo)
				audioTotal += ad
				clip(i, r.AudioPath, "audio clips", ad)
			case r.Soundtrack && !r.Info.HasAudio:
				add(i, r.Path, "Use it without its sound, or pair a sound file.", "has no sound track (use it as a silent video reference)")
			}
		case KindAudio:
			clips++
			if !r.Info.HasAudio && r.Info.Kind != 0 {
				add(i, r.Path, otherSound, "has no sound")
			}
			d := dur(r.Info)
			audioTotal += d
			clip(i, r.Path, "audio clips", d)
		default:
			add(i, r.Path, "", "unknown reference kind %v", r.Kind)
		}
	}
	if images > l.MaxImages {
		add(-1, "", fewerRefs, "at most %d picture references, got %d", l.MaxImages, images)
	}
	if videos > l.MaxVideos {
		add(-1, "", fewerRefs, "at most %d video references, got %d", l.MaxVideos, videos)
	}
	if clips > l.MaxAudioClips {
		add(-1, "", fewerRefs, "at most %d audio clips, got %d", l.MaxAudioClips, clips)
	}
	if files > l.MaxFiles {
		add(-1, "", fewerRefs, "at most %d reference files in all, got %d", l.MaxFiles, files)
	}
	if videos > 1 && videoTotal > l.MaxTotal {
		add(-1, "", shorter, "reference videos may last %s in total; these last %s", secs(l.MaxTotal), secs(videoTotal))
	}
	if clips > 1 && audioTotal > l.MaxTotal {
		add(-1, "", shorter, "audio clips may last %s in total; these last %s", secs(l.MaxTotal), secs(audioTotal))
	}
	if clips > 0 && images+videos == 0 {
		add(-1, "", "Add a picture or a video, or remove the sound.", "an audio reference needs at least one picture or video reference")
	}
	if len(ps) > 0 {
		return &RefError{Problems: ps}
	}
	return nil
}

// PrepareRefImage resizes a decoded reference picture per policy p (PIL
// LANCZOS, untouched when already at its target size). canvasW×canvasH is
// the generation canvas (policy match).
func PrepareRefImage(img *image.RGBA, p RefImagePolicy, canvasW, canvasH int) (*image.RGBA, error) {
	b := img.Bounds()
	w, h, err := RefImageSize(b.Dx(), b.Dy(), p, canvasW, canvasH)
	if err != nil {
		return nil, err
	}
	return Resize(img, w, h, Lanczos), nil
}

// RefVideo is a normalised reference video's geometry.
type RefVideo struct {
	Width, Height int // canvas (RefVideoCanvas)
	Frames        int // normalised frames delivered (≤ the target)
	VAEFrames     int // VAEFrames(Frames): the prefix the video VAE encodes
}

// NormalizeVideo decodes a reference video the reference's way (ERRATA F1,
// F8): native frames → 24 fps by dropping/duplicating (Slots) → at most
// target frames → each resized to RefVideoCanvas of the decoded size with
// PIL LANCZOS. each receives the normalised frames in order (a frame shown
// twice is delivered twice, the same *image.RGBA) and must not modify them.
// Qwen's vision tower samples all delivered frames; the video VAE encodes
// the first VAEFrames.
func NormalizeVideo(ctx context.Context, src Source, target int, p RefVideoPolicy, each func(i int, frame *image.RGBA) error) (RefVideo, error) {
	info := src.Info()
	if info.Kind != KindVideo {
		return RefVideo{}, fmt.Errorf("media: not a video")
	}
	if target <= 0 {
		return RefVideo{}, fmt.Errorf("media: reference video target of %d frames", target)
	}
	fps := info.FPS
	if !(fps > 0) {
		fps = FPS
	}
	w, h, err := RefVideoCanvas(info.Width, info.Height, p)
	if err != nil {
		return RefVideo{}, err
	}
	scale := FPS / fps
	slot := func(i int) int {
		if fps == FPS {
			return i
		}
		return int(math.Floor(float64(i)*scale + 0.5))
	}
	// Native frames that can reach the target, plus one.
	native := int(math.Ceil(float64(target)/scale)) + 1
	out := 0
	stop := errors.New("enough")
	err = src.Frames(ctx, native, func(i int, f *image.RGBA) error {
		if err := ctx.Err(); err != nil {
			return err // before a frame's resize (long on a 768-class canvas)
		}
		reps := slot(i+1) - slot(i)
		if reps <= 0 {
			return nil
		}
		var r *image.RGBA
		for k := 0; k < reps && out < target; k++ {
			if r == nil {
				r = Resize(f, w, h, Lanczos)
			}
			if err := each(out, r); err != nil {
				return err
			}
			out++
		}
		if out >= target {
			return stop
		}
		return nil
	})
	if err != nil && err != stop {
		return RefVideo{}, err
	}
	if out == 0 {
		return RefVideo{}, fmt.Errorf("media: the video has no frames")
	}
	return RefVideo{Width: w, Height: h, Frames: out, VAEFrames: VAEFrames(out)}, nil
}

// CollectVideo is NormalizeVideo into a slice.
func CollectVideo(ctx context.Context, src Source, target int, p RefVideoPolicy) ([]*image.RGBA, RefVideo, error) {
	var frames []*image.RGBA
	rv, err := NormalizeVideo(ctx, src, target, p, func(_ int, f *image.RGBA) error {
		frames = append(frames, f)
		return nil
	})
	return frames, rv, err
}
