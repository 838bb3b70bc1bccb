//go:build darwin

package avf

import (
	"context"
	"fmt"
	"image"
	"unsafe"

	"github.com/progrium/darwinkit/macos/avfoundation"
	"github.com/progrium/darwinkit/macos/coregraphics"
	"github.com/progrium/darwinkit/macos/coremedia"
	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/objc"

	"h3studio/darwin/objcpool"

	"h3studio/engine/media"
)

// ExportComposition implements media.Platform's ExportComposition with an
// AVMutableComposition: the clips' trimmed ranges are inserted on two
// alternating video tracks and two audio tracks (A/B roll, so that a
// crossfade's clips overlap in time); an AVMutableVideoComposition at 24
// fps and the output size ramps the outgoing clip's opacity from 1 to 0 over
// each crossfade, and an AVMutableAudioMix ramps the two clips' volumes
// over it (muted clips are left out). AVAssetReader's composition outputs
// decode, trim, blend and mix; the frames and the sound go through the MP4
// sink (NewMP4Sink: H.264, AAC 32 kHz stereo, temporary name, renamed when
// done). The extra sound track is added to the mixed sound at its gain in
// Go (AVAudioMix volumes stop at 1, and the track's gain may be above).
//
// Status: type-checked for darwin/arm64 only; it has not run on a Mac
// (media.RenderComposition, the portable path, is the one measured).
func ExportComposition(ctx context.Context, c media.Composition, dst string, o media.ExportOptions) error {
	if err := c.Validate(); err != nil {
		return err
	}
	// every source opened (and named when it fails) before anything is written
	infos := make([]media.Info, len(c.Clips))
	for i, cl := range c.Clips {
		s, err := media.Open(cl.Path)
		if err != nil {
			return err
		}
		infos[i] = s.Info()
		s.Close()
		if infos[i].Kind != media.KindVideo {
			return &media.Error{Path: cl.Path, Problem: "is not a video"}
		}
	}
	var extra media.Audio
	if c.Sound != nil {
		s, err := media.Open(c.Sound.Path)
		if err != nil {
			return err
		}
		a, err := s.Audio(ctx)
		s.Close()
		if err != nil {
			return err
		}
		extra = media.Resample(a.Stereo(), media.SampleRate)
	}
	w, h := c.Width, c.Height
	if w == 0 || h == 0 {
		w, h = infos[0].Width&^1, infos[0].Height&^1
	}
	starts, total := c.Starts()
	fades := c.Fades()

	sink, err := NewMP4Sink(dst, o.MP4)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			sink.Abort()
		}
	}()
	if err := sink.Begin(media.OutputFormat(w, h, total)); err != nil {
		return err
	}
	var sound media.Audio
	objcpool.With(func() {
		var comp avfoundation.MutableComposition
		var vc avfoundation.MutableVideoComposition
		var mix avfoundation.MutableAudioMix
		comp, vc, mix, err = buildComposition(c, infos, starts, fades, w, h)
		if err != nil {
			return
		}
		if err = readCompositionFrames(ctx, comp, vc, total, sink, o.Progress); err != nil {
			return
		}
		sound, err = readCompositionSound(ctx, comp, mix)
	})
	if err != nil {
		return &media.Error{Path: dst, Problem: "the AVFoundation composition failed", Err: err}
	}
	n := media.AudioSamplesFor(total, media.SampleRate)
	out := media.Audio{Rate: media.SampleRate, Channels: media.NumChannels, Samples: make([]float32, 2*n)}
	copy(out.Samples, sound.Samples)
	if err := media.FinishSink(ctx, sink, c.AddSound(out, extra)); err != nil {
		return err
	}
	ok = true
	return nil
}

func frameTime(f int) coremedia.Time { return cmTime(int64(f), media.FPS) }

func frameRange(from, n int) coremedia.TimeRange {
	return coremedia.TimeRange{Start: frameTime(from), Duration: frameTime(n)}
}

// addTrack adds an empty track the composition numbers. Called inside a pool.
func addTrack(comp avfoundation.MutableComposition, kind avfoundation.MediaType) avfoundation.MutableCompositionTrack {
	// kCMPersistentTrackID_Invalid (0): the composition picks the ID
	return objc.Call[avfoundation.MutableCompositionTrack](comp, objc.Sel("addMutableTrackWithMediaType:preferredTrackID:"), kind, int32(0))
}

// buildComposition lays the clips on A/B tracks and writes the video
// composition's instructions (one per stretch: a clip alone, or two in a
// crossfade, covering 0…total without gaps) and the audio mix's ramps.
// Called inside a pool.
func buildComposition(c media.Composition, infos []media.Info, starts, fades []int, w, h int) (avfoundation.MutableComposition, avfoundation.MutableVideoComposition, avfoundation.MutableAudioMix, error) {
	comp := avfoundation.MutableComposition_Composition()
	vt := [2]avfoundation.MutableCompositionTrack{addTrack(comp, avfoundation.MediaTypeVideo), addTrack(comp, avfoundation.MediaTypeVideo)}
	at := [2]avfoundation.MutableCompositionTrack{addTrack(comp, avfoundation.MediaTypeAudio), addTrack(comp, avfoundation.MediaTypeAudio)}
	params := [2]avfoundation.MutableAudioMixInputParameters{
		avfoundation.MutableAudioMixInputParameters_AudioMixInputParametersWithTrack(at[0]),
		avfoundation.MutableAudioMixInputParameters_AudioMixInputParametersWithTrack(at[1]),
	}
	params[0].SetVolumeAtTime(0, frameTime(0))
	params[1].SetVolumeAtTime(0, frameTime(0))
	layers := [2]avfoundation.MutableVideoCompositionLayerInstruction{
		avfoundation.MutableVideoCompositionLayerInstruction_VideoCompositionLayerInstructionWithAssetTrack(vt[0]),
		avfoundation.MutableVideoCompositionLayerInstruction_VideoCompositionLayerInstructionWithAssetTrack(vt[1]),
	}
	for i, cl := range c.Clips {
		k := i % 2
		asset := avfoundation.URLAsset_URLAssetWithURLOptions(foundation.URL_FileURLWithPath(cl.Path), nil)
		v, a := tracks(asset)
		if v.IsNil() {
			return comp, avfoundation.MutableVideoComposition{}, avfoundation.MutableAudioMix{}, fmt.Errorf("%s has no video track", cl.Path)
		}
		var e foundation.Error
		if !vt[k].InsertTimeRangeOfTrackAtTimeError(frameRange(cl.In, cl.Len), v, frameTime(starts[i]), unsafe.Pointer(&e)) {
			return comp, avfoundation.MutableVideoComposition{}, avfoundation.MutableAudioMix{}, fmt.Errorf("%s: %v", cl.Path, nsError(e))
		}
		// the picture scaled to cover the output, centred
		sx, sy := float64(w)/float64(infos[i].Width), float64(h)/float64(infos[i].Height)
		s := max(sx, sy)
		tx := (float64(w) - s*float64(infos[i].Width)) / 2
		ty := (float64(h) - s*float64(infos[i].Height)) / 2
		layers[k].SetTransformAtTime(coregraphics.AffineTransform{M11: s, M22: s, TX: tx, TY: ty}, frameTime(starts[i]))
		layers[k].SetOpacityAtTime(1, frameTime(starts[i]))
		if i+1 < len(c.Clips) && fades[i] > 0 {
			layers[k].SetOpacityRampFromStartOpacityToEndOpacityTimeRange(1, 0, frameRange(starts[i+1], fades[i]))
		}
		if cl.Mute {
			continue
		}
		if a.IsNil() && cl.SoundPath != "" {
			_, a = tracks(avfoundation.URLAsset_URLAssetWithURLOptions(foundation.URL_FileURLWithPath(cl.SoundPath), nil))
		}
		if a.IsNil() {
			continue
		}
		if !at[k].InsertTimeRangeOfTrackAtTimeError(frameRange(cl.In, cl.Len), a, frameTime(starts[i]), unsafe.Pointer(&e)) {
			return comp, avfoundation.MutableVideoComposition{}, avfoundation.MutableAudioMix{}, fmt.Errorf("%s (sound): %v", cl.Path, nsError(e))
		}
		p := params[k]
		fadeIn := 0
		if i > 0 {
			fadeIn = fades[i-1]
		}
		if fadeIn > 0 {
			p.SetVolumeRampFromStartVolumeToEndVolumeTimeRange(0, 1, frameRange(starts[i], fadeIn))
		} else {
			p.SetVolumeAtTime(1, frameTime(starts[i]))
		}
		if i+1 < len(c.Clips) && fades[i] > 0 {
			p.SetVolumeRampFromStartVolumeToEndVolumeTimeRange(1, 0, frameRange(starts[i+1], fades[i]))
		}
		p.SetVolumeAtTime(0, frameTime(starts[i]+cl.Len))
	}
	// instructions: alone from the end of the fade into clip i to the
	// start of the fade out of it, then both over the crossfade
	var ins []objc.IObject
	add := func(from, to int, ls ...avfoundation.IVideoCompositionLayerInstruction) {
		if to <= from {
			return
		}
		in := avfoundation.MutableVideoCompositionInstruction_VideoCompositionInstruction()
		in.SetTimeRange(frameRange(from, to-from))
		in.SetLayerInstructions(ls)
		ins = append(ins, in)
	}
	for i, cl := range c.Clips {
		k := i % 2
		from := starts[i]
		if i > 0 {
			from += fades[i-1]
		}
		end := starts[i] + cl.Len
		if i+1 < len(c.Clips) && fades[i] > 0 {
			add(from, starts[i+1], layers[k])
			// the outgoing clip on top, fading out over the incoming one
			add(starts[i+1], end, layers[k], layers[1-k])
		} else {
			add(from, end, layers[k])
		}
	}
	vc := avfoundation.MutableVideoComposition_VideoComposition()
	vc.SetFrameDuration(frameTime(1))
	vc.SetRenderSize(coregraphics.Size{Width: float64(w), Height: float64(h)})
	vc.SetInstructions(ins)
	mix := avfoundation.MutableAudioMix_AudioMix()
	mix.SetInputParameters([]avfoundation.IAudioMixInputParameters{params[0], params[1]})
	return comp, vc, mix, nil
}

// compositionReader is an AVAssetReader over the composition (autoreleased).
// Called inside a pool.
func compositionReader(comp avfoundation.MutableComposition) (avfoundation.AssetReader, error) {
	var e foundation.Error
	r := avfoundation.NewAssetReaderWithAssetError(comp, unsafe.Pointer(&e))
	if err := nsError(e); err != nil || r.IsNil() {
		return r, fmt.Errorf("cannot read the composition: %v", err)
	}
	return r, nil
}

func tracksOf(comp avfoundation.MutableComposition, kind avfoundation.MediaType) []avfoundation.IAssetTrack {
	var out []avfoundation.IAssetTrack
	for _, t := range comp.Tracks() {
		if t.MediaType() == kind && len(t.Segments()) > 0 {
			out = append(out, t)
		}
	}
	return out
}

// readCompositionFrames decodes the video composition's frames (24 fps, the
// output size) into the sink: exactly total frames (a short read holds
// the last one). Called inside a pool.
func readCompositionFrames(ctx context.Context, comp avfoundation.MutableComposition, vc avfoundation.MutableVideoComposition, total int, sink media.Sink, progress func(int, int)) error {
	r, err := compositionReader(comp)
	if err != nil {
		return err
	}
	out := objc.Call[avfoundation.AssetReaderVideoCompositionOutput](avfoundation.AssetReaderVideoCompositionOutputClass.Alloc(),
		objc.Sel("initWithVideoTracks:videoSettings:"), tracksOf(comp, avfoundation.MediaTypeVideo), settings(C_videoReaderSettings()))
	defer out.Release()
	out.SetVideoComposition(vc)
	if !r.CanAddOutput(out) {
		return fmt.Errorf("cannot decode the video composition")
	}
	if err := addOutput(r, out); err != nil {
		return fmt.Errorf("cannot decode the video composition: %w", err)
	}
	if !r.StartReading() {
		return fmt.Errorf("cannot decode the video composition: %v", nsError(r.Error()))
	}
	defer r.CancelReading()
	var last *image.RGBA
	for n := 0; n < total; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		frame := nextFrame(out)
		if frame == nil {
			if last == nil {
				return fmt.Errorf("the video composition gave no frames: %v", nsError(r.Error()))
			}
			frame = last
		}
		if err := sink.WriteFrame(frame); err != nil {
			return err
		}
		last = frame
		if progress != nil {
			progress(n+1, total)
		}
	}
	return nil
}

// readCompositionSound decodes the audio mix (clips' sounds with their
// ramps) at 32 kHz stereo; silent when no clip has sound. Called inside a
// pool.
func readCompositionSound(ctx context.Context, comp avfoundation.MutableComposition, mix avfoundation.MutableAudioMix) (media.Audio, error) {
	ts := tracksOf(comp, avfoundation.MediaTypeAudio)
	if len(ts) == 0 {
		return media.Audio{}, nil
	}
	r, err := compositionReader(comp)
	if err != nil {
		return media.Audio{}, err
	}
	out := objc.Call[avfoundation.AssetReaderAudioMixOutput](avfoundation.AssetReaderAudioMixOutputClass.Alloc(),
		objc.Sel("initWithAudioTracks:audioSettings:"), ts, settings(C_audioReaderSettings()))
	defer out.Release()
	out.SetAudioMix(mix)
	if !r.CanAddOutput(out) {
		return media.Audio{}, fmt.Errorf("cannot decode the audio mix")
	}
	if err := addOutput(r, out); err != nil {
		return media.Audio{}, fmt.Errorf("cannot decode the audio mix: %w", err)
	}
	if !r.StartReading() {
		return media.Audio{}, fmt.Errorf("cannot decode the audio mix: %v", nsError(r.Error()))
	}
	defer r.CancelReading()
	var a media.Audio
	readPCM(ctx, out, &a, 0) // a buffer that cannot be copied is left out of the mix
	if err := ctx.Err(); err != nil {
		return media.Audio{}, err
	}
	if r.Status() == avfoundation.AssetReaderStatusFailed {
		return media.Audio{}, fmt.Errorf("cannot decode the audio mix: %v", nsError(r.Error()))
	}
	if a.Channels <= 0 || a.Rate <= 0 {
		return media.Audio{}, nil
	}
	a.Samples = a.Samples[:len(a.Samples)/a.Channels*a.Channels]
	return media.Resample(a.Stereo(), media.SampleRate), nil
}
