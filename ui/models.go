package ui

import (
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"h3studio/engine/hfhub"
	"h3studio/engine/snapshot"
	"h3studio/ui/studio"
)

// modelsWindow is the Models window: the snapshots on this disk, the
// downloads offered by task with their sizes and the free space, the
// running download with pause/resume/cancel, and the token the Hub asks
// for when the model is gated. Its state is studio.Models.
type modelsWindow struct {
	main *Window
	m    *studio.Models
	win  fyne.Window
	b    *boundary
	snap studio.ModelsSnapshot

	installed   *fyne.Container
	installedID string
	choices     *widget.RadioGroup
	choiceSets  [][]snapshot.Task
	free        *widget.Label
	status      *widget.Label
	bar         *widget.ProgressBar
	start       *widget.Button
	pause       *widget.Button
	resume      *widget.Button
	cancel      *widget.Button
	tokenBox    *fyne.Container
	token       *widget.Entry
	message     *widget.Label
	unsubscribe func()
}

// ShowModels opens (or brings forward) the Models window.
func (w *Window) ShowModels() {
	if w.opts.Models == nil {
		w.s.Notify(studio.Info, "This build has no model manager; use `h3studio model download`.")
		return
	}
	if w.models != nil {
		w.models.win.Show()
		w.models.win.RequestFocus()
		return
	}
	w.models = newModelsWindow(w, w.opts.Models)
	w.models.win.Show()
}

func newModelsWindow(main *Window, m *studio.Models) *modelsWindow {
	mw := &modelsWindow{main: main, m: m}
	mw.win = fyne.CurrentApp().NewWindow("Models")
	mw.installed = container.NewVBox()
	mw.choices = widget.NewRadioGroup(nil, nil)
	mw.free = widget.NewLabel("")
	mw.free.Wrapping = fyne.TextWrapWord
	mw.status = widget.NewLabel("")
	mw.status.Wrapping = fyne.TextWrapWord
	mw.message = widget.NewLabel("")
	mw.message.Wrapping = fyne.TextWrapWord
	mw.bar = widget.NewProgressBar()
	mw.start = widget.NewButton("Download", mw.doStart)
	mw.start.Importance = widget.HighImportance
	mw.pause = widget.NewButton("Pause", m.Pause)
	mw.resume = widget.NewButton("Resume", func() { mw.report(m.Resume()) })
	mw.cancel = widget.NewButton("Cancel", func() {
		dialog.ShowConfirm("Cancel the download?", "The files downloaded so far are kept; the partial ones are deleted.", func(ok bool) {
			if ok {
				m.Cancel()
			}
		}, mw.win)
	})
	mw.token = widget.NewPasswordEntry()
	mw.token.SetPlaceHolder("hf_…")
	mw.tokenBox = container.NewVBox(
		widget.NewLabel("MiniMax-H3 is gated: accept its licence on the model page with your Hugging Face account, then paste a read token."),
		container.NewHBox(
			widget.NewButton("Open the Model Page", m.OpenModelPage),
			widget.NewButton("Create a Token", m.OpenTokenPage),
		),
		container.NewBorder(nil, nil, nil, widget.NewButton("Save Token and Retry", func() {
			if err := m.SetToken(mw.token.Text); err != nil {
				mw.report(err)
				return
			}
			mw.token.SetText("")
			mw.report(m.Resume())
		}), mw.token),
	)
	mw.tokenBox.Hide()
	download := container.NewVBox(
		widget.NewLabelWithStyle("Download", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		mw.choices, mw.free,
		container.NewHBox(mw.start, mw.pause, mw.resume, mw.cancel),
		mw.bar, mw.status, mw.tokenBox,
	)
	header := container.NewBorder(nil, nil,
		widget.NewLabelWithStyle("On this Mac", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), widget.NewButton("Rescan", m.Refresh))
	body := container.NewBorder(container.NewVBox(header), container.NewVBox(widget.NewSeparator(), download, mw.message), nil, nil,
		container.NewVScroll(mw.installed))
	mw.win.SetContent(container.NewPadded(body))
	mw.win.Resize(fyne.NewSize(760, 620))
	mw.win.SetOnClosed(func() {
		mw.unsubscribe()
		mw.b.stop()
		main.models = nil
	})
	mw.b = newBoundary(main.opts.Do, mw.apply, 100*time.Millisecond)
	mw.unsubscribe = m.Subscribe(mw.b.poke)
	m.Refresh()
	m.LoadChoices()
	mw.apply()
	return mw
}

func (mw *modelsWindow) report(err error) {
	if err != nil {
		dialog.ShowError(err, mw.win)
	}
}

func (mw *modelsWindow) doStart() {
	i := -1
	for k, o := range mw.choices.Options {
		if o == mw.choices.Selected {
			i = k
		}
	}
	if i < 0 || i >= len(mw.choiceSets) {
		mw.report(fmt.Errorf("choose what to download"))
		return
	}
	mw.report(mw.m.Start(mw.choiceSets[i], ""))
}

func (mw *modelsWindow) apply() {
	s := mw.m.Snapshot()
	mw.snap = s
	mw.applyInstalled(s)
	// Choices, sized from the Hub's tree.
	var opts []string
	mw.choiceSets = mw.choiceSets[:0]
	for _, c := range s.Choices {
		size := snapshot.HumanBytes(c.Total)
		if c.Need < c.Total {
			size = fmt.Sprintf("%s, %s still to download", size, snapshot.HumanBytes(c.Need))
		}
		opts = append(opts, fmt.Sprintf("%s — %s", c.Label, size))
		mw.choiceSets = append(mw.choiceSets, c.Tasks)
	}
	if strings.Join(opts, "\n") != strings.Join(mw.choices.Options, "\n") {
		sel := mw.choices.Selected
		mw.choices.Options = opts
		if sel == "" && len(opts) > 0 {
			sel = opts[0]
		}
		for _, o := range opts {
			if strings.HasPrefix(o, strings.SplitN(sel, " — ", 2)[0]) {
				mw.choices.Selected = o
			}
		}
		mw.choices.Refresh()
	}
	free := "free space: checking…"
	if s.Free >= 0 {
		free = fmt.Sprintf("Into the Hugging Face cache (%s, shared with hf, diffusers and h3.c) · %s free", s.HubCache, snapshot.HumanBytes(s.Free))
	}
	if s.ChoiceErr != "" {
		free += "\nThe sizes could not be fetched: " + s.ChoiceErr
	}
	mw.free.SetText(free)
	// The download.
	d := s.Download
	running := d.Phase == studio.DownloadPlanning || d.Phase == studio.DownloadRunning
	enable(mw.start, !running && len(s.Choices) > 0)
	enable(mw.pause, running)
	enable(mw.cancel, running || d.Phase == studio.DownloadPaused)
	enable(mw.resume, d.Phase == studio.DownloadPaused || d.Phase == studio.DownloadFailed)
	p := d.Progress
	if p.Total > 0 {
		mw.bar.SetValue(float64(p.Done) / float64(p.Total))
	} else {
		mw.bar.SetValue(0)
	}
	mw.status.SetText(downloadStatus(d))
	if d.Gated {
		mw.tokenBox.Show()
	} else {
		mw.tokenBox.Hide()
	}
	mw.message.SetText(s.Message)
}

func enable(b *widget.Button, on bool) {
	if on {
		b.Enable()
	} else {
		b.Disable()
	}
}

// downloadStatus says where the download stands in one or two lines.
func downloadStatus(d studio.DownloadState) string {
	p := d.Progress
	amount := fmt.Sprintf("%s of %s", snapshot.HumanBytes(p.Done), snapshot.HumanBytes(p.Total))
	switch d.Phase {
	case studio.DownloadIdle:
		return "Downloads resume where they stopped, after a quit, a sleep or a lost connection; every file is verified before it is used."
	case studio.DownloadPlanning:
		return "Asking the Hub for the file list…"
	case studio.DownloadRunning:
		line := amount
		if p.Rate > 0 {
			line += fmt.Sprintf(" · %s/s", snapshot.HumanBytes(int64(p.Rate)))
		}
		if p.ETA > 0 {
			line += " · about " + p.ETA.Round(time.Minute).String() + " left"
		}
		if len(p.Active) > 0 {
			line += "\n" + p.Active[0].Path
			if len(p.Active) > 1 {
				line += fmt.Sprintf(" and %d more", len(p.Active)-1)
			}
		}
		return line
	case studio.DownloadPaused:
		return "Paused at " + amount + ". Resume continues the partial files."
	case studio.DownloadCancelled:
		return "Cancelled."
	case studio.DownloadDone:
		return "Done: " + amount + ", every file verified. The studio uses it now."
	case studio.DownloadFailed:
		return "Stopped: " + d.Err
	}
	return string(d.Phase)
}

// applyInstalled rebuilds the list of snapshots when it changed.
func (mw *modelsWindow) applyInstalled(s studio.ModelsSnapshot) {
	id := fmt.Sprint(s.Installed, s.Verifies, s.Scanning)
	if id == mw.installedID {
		return
	}
	mw.installedID = id
	var rows []fyne.CanvasObject
	if len(s.Installed) == 0 {
		msg := "No MiniMax-H3 snapshot found in the Hugging Face cache or the usual folders."
		if s.Scanning || !s.Scanned {
			msg = "Looking for snapshots…"
		}
		rows = append(rows, widget.NewLabel(msg))
	}
	for _, in := range s.Installed {
		rows = append(rows, mw.installedRow(in, s.Verifies[in.Path]))
	}
	mw.installed.Objects = rows
	mw.installed.Refresh()
}

func (mw *modelsWindow) installedRow(in hfhub.Installed, verify string) fyne.CanvasObject {
	rev := in.Revision
	if len(rev) > 10 {
		rev = rev[:10]
	}
	if rev == "" {
		rev = "unknown revision"
	}
	tasks := strings.ToUpper(strings.Join(in.Tasks, ", "))
	if tasks == "" {
		tasks = "no task yet"
	}
	title := widget.NewLabelWithStyle(fmt.Sprintf("%s · %s · %s", tasks, snapshot.HumanBytes(in.Size), in.State), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	where := fmt.Sprintf("%s (%s, %s)", in.Path, in.Source, rev)
	if in.Demo {
		where += " — demo model"
	}
	detail := widget.NewLabel(where)
	detail.Truncation = fyne.TextTruncateEllipsis
	lines := []fyne.CanvasObject{title, detail}
	if len(in.Missing) > 0 {
		l := widget.NewLabel("Missing: " + strings.Join(in.Missing, "; "))
		l.Wrapping = fyne.TextWrapWord
		lines = append(lines, l)
	}
	if verify != "" {
		l := widget.NewLabel(verify)
		l.Wrapping = fyne.TextWrapWord
		lines = append(lines, l)
	}
	path := in.Path
	use := widget.NewButton("Use", func() { mw.m.Use(path) })
	enable(use, in.Complete())
	buttons := container.NewHBox(use,
		widget.NewButton("Verify", func() { mw.m.Verify(path) }),
		widget.NewButton("Repair", func() { mw.m.Repair(path) }),
		widget.NewButton(revealLabel, func() { mw.main.reveal(path) }),
		widget.NewButton("Move to Trash", func() {
			dialog.ShowConfirm("Move to the Trash?", path+"\n\nThe files can be restored from the Trash until it is emptied.", func(ok bool) {
				if ok {
					mw.report(mw.m.Remove(path))
				}
			}, mw.win)
		}),
	)
	return container.NewVBox(container.NewVBox(lines...), buttons, widget.NewSeparator())
}
