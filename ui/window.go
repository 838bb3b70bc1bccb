package ui

import (
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/engine/media"
	"h3studio/ui/studio"
	"h3studio/ui/widgets"
)

// Sound is the player's audio output (package sound in the app).
type Sound interface {
	widgets.Clock
	SetAudio(media.Audio)
	Notice() string
}

// Options configure the window.
type Options struct {
	// Do runs a function on the UI goroutine; default fyne.Do. It is the
	// only way anything crosses from the studio's goroutines into Fyne.
	Do func(func())
	// Interval is the shortest time between two applies of the studio's
	// state (default 33 ms); Immediate applies at every change (tests).
	Interval  time.Duration
	Immediate bool
	Version   string
	// Reveal shows a file in Finder (the file manager elsewhere).
	Reveal func(path string) error
	Sound  Sound
	// Prefs remember choices between runs (may be nil).
	Prefs Prefs
	// Quit ends the app (default fyne.CurrentApp().Quit).
	Quit func()
	// Models is the model manager behind the Models window (nil: none).
	Models *studio.Models
	// LocalAPI is the app's /v1/videos server, switched in Settings (nil:
	// no such setting).
	LocalAPI LocalAPI
	// Server is Settings ▸ Run on server (nil: no such setting).
	Server RemoteServer
}

// RemoteServer is the Run on server choice: takes queued while it is on
// are made by a /v1/videos server (SGLang Diffusion, or another H3
// Studio) and saved in this library.
type RemoteServer interface {
	// Current is the remembered server, its kind ("sglang", "h3studio"),
	// the shared folder map ("LOCAL=REMOTE") and whether it is on.
	Current() (url, kind, shared string, on bool)
	// Apply switches it; an empty token keeps the stored one.
	Apply(url, token, kind, shared string, on bool) error
}

// LocalAPI is the local /v1/videos server over the studio's queue.
type LocalAPI interface {
	Enabled() bool
	SetEnabled(on bool) error
	Address() string // the base URL clients use
	Token() string   // the bearer token ("" until first enabled)
}

// Prefs is where the window records the user's choices.
type Prefs interface {
	SetModelDir(dir string)
	SetLibraryDir(dir string)
}

// Window is the studio's main window: Compose, Viewer (with progress) and
// Library side by side, notices over the viewer's top and a status bar.
type Window struct {
	win  fyne.Window
	s    *studio.Studio
	opts Options
	b    *boundary

	compose  *compose
	viewer   *viewer
	progress *progress
	library  *library
	timeline *timeline
	seeds    *seedGrid // the open "Generate N seeds" grid, if any
	status   *statusBar
	notices  *notices

	snap        studio.Snapshot
	models      *modelsWindow // the Models window while it is open
	quitting    bool
	reportFor   string // show the model report when this folder is inspected
	unsubscribe func()
	applyCount  int
	// undoTimeline says that Edit ▸ Undo and Redo (⌘Z, ⇧⌘Z with no text
	// field focused) walk the timeline's history: the sequence was edited
	// after the draft. draftEdits is the draft's edit count last seen.
	undoTimeline bool
	draftEdits   uint64
}

// New builds the main window's content, menus, shortcuts and drop handling
// into w and starts following the studio.
func New(w fyne.Window, s *studio.Studio, o Options) *Window {
	if o.Do == nil {
		o.Do = fyne.Do
	}
	if o.Interval == 0 {
		o.Interval = 33 * time.Millisecond
	}
	if o.Immediate {
		o.Interval = 0
	}
	if o.Quit == nil {
		o.Quit = func() { fyne.CurrentApp().Quit() }
	}
	win := &Window{win: w, s: s, opts: o}
	win.compose = newCompose(win)
	win.viewer = newViewer(win)
	win.progress = newProgress(win)
	win.library = newLibrary(win)
	win.timeline = newTimeline(win)
	win.status = newStatusBar(win)
	win.notices = newNotices(win)

	// The notices float over the top of the viewer: they take no room of
	// their own, so nothing under the pointer moves when one comes or goes.
	shown := container.NewStack(win.viewer.content, container.New(topOverlay{}, win.notices.content))
	center := container.NewBorder(nil, container.NewVBox(win.progress.content, win.timeline.content), nil, nil, shown)
	right := container.NewHSplit(center, win.library.content)
	right.Offset = 0.70
	main := container.NewHSplit(win.compose.content, right)
	main.Offset = 0.29
	body := container.NewBorder(nil, win.status.content, nil, nil, main)
	bg := canvas.NewRectangle(theme.Color(theme.ColorNameBackground))
	w.SetContent(container.NewStack(bg, body))

	w.SetMainMenu(win.mainMenu())
	win.addShortcuts()
	w.SetOnDropped(win.HandleDrop)
	w.SetCloseIntercept(win.requestClose)
	w.Canvas().SetOnTypedKey(win.typedKey)

	win.b = newBoundary(o.Do, win.apply, o.Interval)
	win.unsubscribe = s.Subscribe(win.b.poke)
	win.apply()
	return win
}

// Sync applies the studio's current state now (on the caller's goroutine,
// which must be the UI's); tests call it after driving the studio.
func (w *Window) Sync() { w.apply() }

// Snapshot is the state last applied.
func (w *Window) Snapshot() studio.Snapshot { return w.snap }

// Fyne returns the window.
func (w *Window) Fyne() fyne.Window { return w.win }

// Player is the viewer's player.
func (w *Window) Player() *widgets.Player { return w.viewer.player }

func (w *Window) apply() {
	sn := w.s.Snapshot()
	w.snap = sn
	w.applyCount++
	if sn.DraftEdits != w.draftEdits {
		w.draftEdits, w.undoTimeline = sn.DraftEdits, false
	}
	w.compose.apply(sn)
	w.viewer.apply(sn)
	w.progress.apply(sn)
	w.library.apply(sn)
	w.timeline.apply()
	if w.seeds != nil {
		w.seeds.apply(sn)
	}
	w.status.apply(sn)
	w.notices.apply(sn)
	w.applyModelReport(sn)
	if w.quitting && !w.s.Queue().Busy() {
		w.quitting = false
		w.closeNow()
	}
}

// requestClose asks before closing while a take is being generated; then
// it cancels, waits for the engine to stop cleanly, and quits.
func (w *Window) requestClose() {
	if !w.s.Queue().Busy() {
		w.closeNow()
		return
	}
	if !w.s.Queue().Generating() { // only the first start's sample take: no question
		w.quitting = true
		w.s.Queue().CancelAll()
		return
	}
	confirmDialog(w.win, "Stop generating and quit?",
		"A take is being generated. If you quit now it is cancelled and nothing of it is saved; your library is not touched.",
		"Cancel and Quit", func() {
			w.quitting = true
			w.s.Queue().CancelAll()
			w.s.Notify(studio.Info, "Cancelling the take, then quitting…")
		})
}

func (w *Window) closeNow() {
	w.Stop()
	w.s.Close()
	w.opts.Quit()
}

// Stop detaches the window from the studio (the app is quitting): no more
// applies, playback stopped.
func (w *Window) Stop() {
	if w.unsubscribe != nil {
		w.unsubscribe()
		w.unsubscribe = nil
	}
	w.b.stop()
	w.timeline.tl.Close()
	w.viewer.player.OnChange = nil
	w.viewer.player.Pause()
}

// typedKey forwards transport keys to the player when no text field has
// the focus.
func (w *Window) typedKey(e *fyne.KeyEvent) {
	if f := w.win.Canvas().Focused(); f != nil {
		if _, isPlayer := f.(*widgets.Player); !isPlayer {
			return
		}
	}
	if w.timeline.handleKey(e.Name) {
		return
	}
	w.viewer.player.HandleKey(e.Name)
}

// section is a panel heading.
func heading(text string) *widget.Label {
	l := widget.NewLabelWithStyle(text, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	return l
}

// panel draws content on a rounded panel background.
func panel(content fyne.CanvasObject) fyne.CanvasObject {
	bg := canvas.NewRectangle(theme.Color(colorPanel))
	bg.CornerRadius = 10
	bg.StrokeColor = theme.Color(theme.ColorNameSeparator)
	bg.StrokeWidth = 1
	return container.NewPadded(container.NewStack(bg, container.NewPadded(content)))
}

func subtle(text string) *widget.Label {
	l := widget.NewLabel(text)
	l.Importance = widget.LowImportance
	l.SizeName = theme.SizeNameCaptionText
	l.Wrapping = fyne.TextWrapWord
	return l
}

func spacer() fyne.CanvasObject { return layout.NewSpacer() }
