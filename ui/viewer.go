package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/engine"
	"h3studio/ui/studio"
	"h3studio/ui/widgets"
)

// viewer is the centre: the picture, the transport, the frame strip and
// the waveform.
type viewer struct {
	w       *Window
	content fyne.CanvasObject

	player    *widgets.Player
	play      *widget.Button
	loop      *widget.Button
	timeL     *widget.Label
	frameL    *widget.Label
	soundL    *widget.Label
	soundIcon *widget.Icon
	follow    *widget.Button
	strip     *widgets.Strip
	wave      *widgets.Waveform
	clip      *studio.Clip
	live      bool
	below     *fyne.Container // the transport, hidden during live previews
	frame     *fyne.Container
	seq       *studio.Playback // the timeline's sequence, while the viewer plays it
	takeLoop  bool             // the Loop setting for takes, kept while the sequence plays
}

func newViewer(w *Window) *viewer {
	v := &viewer{w: w}
	v.player = widgets.NewPlayer()
	v.player.SetMessage("Your takes play here. Write a prompt and press Generate.")
	v.player.OnChange = v.transport
	if w.opts.Sound != nil {
		v.player.SetClock(w.opts.Sound)
	}
	v.play = widget.NewButtonWithIcon("", theme.MediaPlayIcon(), v.player.Toggle)
	v.play.Importance = widget.LowImportance
	prev := widget.NewButtonWithIcon("", theme.MediaSkipPreviousIcon(), func() { v.player.Step(-1) })
	prev.Importance = widget.LowImportance
	next := widget.NewButtonWithIcon("", theme.MediaSkipNextIcon(), func() { v.player.Step(1) })
	next.Importance = widget.LowImportance
	v.loop = widget.NewButtonWithIcon("", loopIcon, func() {
		v.player.Loop = !v.player.Loop
		v.transport()
	})
	v.timeL = widget.NewLabel("00:00.00 / 00:00.00")
	v.timeL.TextStyle.Monospace = true
	v.frameL = widget.NewLabel("")
	v.frameL.SizeName = theme.SizeNameCaptionText
	v.soundL = widget.NewLabel("")
	v.soundL.Importance = widget.LowImportance
	v.soundL.SizeName = theme.SizeNameCaptionText
	v.soundIcon = widget.NewIcon(theme.VolumeUpIcon())
	v.follow = widget.NewButton("Show the live preview", w.s.Takes().FollowJob)
	v.follow.Importance = widget.LowImportance
	v.follow.Hide()
	v.strip = widgets.NewStrip()
	v.strip.OnSeek = func(i int) { v.player.Pause(); v.player.Seek(i) }
	v.wave = widgets.NewWaveform(34)
	v.wave.OnSeek = func(f float64) { v.player.Seek(int(f * float64(v.player.Len()))) }

	bar := container.NewHBox(prev, v.play, next, v.timeL, v.frameL, spacer(), v.follow, v.soundIcon, v.soundL, v.loop)
	v.below = container.NewVBox(bar, v.strip, v.wave)
	below := v.below
	v.frame = container.NewBorder(nil, below, nil, nil, v.player)
	v.content = panel(v.frame)
	v.transport()
	return v
}

// transport updates the controls from the player (on the UI goroutine).
func (v *viewer) transport() {
	p := v.player
	if p.Playing() {
		v.play.SetIcon(theme.MediaPauseIcon())
	} else {
		v.play.SetIcon(theme.MediaPlayIcon())
	}
	if p.Loop {
		v.loop.Importance = widget.HighImportance
	} else {
		v.loop.Importance = widget.LowImportance
	}
	v.loop.Refresh()
	v.timeL.SetText(widgets.FormatTime(p.Time()) + " / " + widgets.FormatTime(p.Duration()))
	if n := p.Len(); n > 0 {
		v.frameL.SetText(fmt.Sprintf("frame %d / %d", p.Frame()+1, n))
	} else {
		v.frameL.SetText("")
	}
	v.strip.SetPosition(p.Frame())
	if n := p.Len(); n > 1 {
		v.wave.SetProgress(float64(p.Frame()+1) / float64(n))
	}
	// The full reason is in the notice area; the transport says it short.
	if s := v.w.opts.Sound; s != nil && s.Notice() == "" {
		v.soundIcon.SetResource(theme.VolumeUpIcon())
		v.soundL.SetText("")
	} else {
		v.soundIcon.SetResource(theme.VolumeMuteIcon())
		v.soundL.SetText("silent")
	}
}

func (v *viewer) apply(sn studio.Snapshot) {
	vw := sn.Viewer
	if vw.Live != nil {
		v.live = true
		v.player.SetLive(vw.Live)
		caption := "Live preview"
		if r := sn.Running; r != nil {
			caption += " · " + studio.PhaseName(r.Current)
			for _, ph := range r.Phases {
				if ph.Phase == r.Current && ph.Total > 0 {
					caption += fmt.Sprintf(" %d/%d", ph.Done, ph.Total)
				}
			}
		}
		v.player.SetCaption(caption)
		v.follow.Hide()
		if v.below.Visible() {
			v.below.Hide()
			v.frame.Refresh()
		}
		return
	}
	if v.live {
		v.live = false
		v.player.SetLive(nil)
	}
	if !v.below.Visible() {
		v.below.Show()
		v.frame.Refresh()
	}
	if sn.Running != nil && !vw.Follow && sn.Running.Current == engine.PhaseDenoise {
		v.follow.Show()
	} else {
		v.follow.Hide()
	}
	if v.seq != nil {
		if vw.Clip == v.clip {
			v.transport() // the viewer keeps playing the sequence
			return
		}
		v.seq = nil // a take was chosen
		v.player.Loop = v.takeLoop
		v.w.timeline.deactivate()
		v.clip = nil
	}
	if vw.Clip != v.clip {
		v.clip = vw.Clip
		if v.clip != nil {
			v.player.SetFrames(v.clip)
			v.strip.SetClip(v.clip.Strip(), v.clip.Len())
			v.wave.SetPeaks(v.clip.Peaks)
			if s := v.w.opts.Sound; s != nil {
				s.SetAudio(v.clip.Audio)
			}
			if vw.Sample {
				v.player.Seek(v.clip.Len() / 2) // a calm still; Space plays it
			}
		} else {
			v.player.SetFrames(nil)
			v.strip.SetClip(nil, 0)
			v.wave.SetPeaks(nil)
		}
	}
	switch {
	case vw.Loading:
		v.player.SetMessage("Loading…")
	case vw.Err != "":
		v.player.SetMessage(vw.Err)
	case vw.Clip == nil:
		v.player.SetMessage("Your takes play here. Write a prompt and press Generate.")
	}
	title := vw.Title
	if vw.Sample {
		title = studio.SampleTitle
	}
	v.player.SetCaption(title)
	v.transport()
}
