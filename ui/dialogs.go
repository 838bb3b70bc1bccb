package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/resources"
	"h3studio/ui/studio"
)

func (w *Window) dialogSize() fyne.Size {
	s := w.win.Canvas().Size()
	return fyne.NewSize(min(900, s.Width*0.8), min(640, s.Height*0.85))
}

func homeURI() fyne.ListableURI {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	l, err := storage.ListerForURI(storage.NewFileURI(home))
	if err != nil {
		return nil
	}
	return l
}

// showFileDialog shows a file or folder dialog titled title, listing only
// files with the extensions exts (nil: every file), opening in the home
// folder at the window's dialog size.
func (w *Window) showFileDialog(d *dialog.FileDialog, title string, exts []string) {
	d.SetTitleText(title)
	if exts != nil {
		d.SetFilter(storage.NewExtensionFileFilter(exts))
	}
	if h := homeURI(); h != nil {
		d.SetLocation(h)
	}
	d.Resize(w.dialogSize())
	d.Show()
}

// chooseFile asks for one file with the given extensions.
func (w *Window) chooseFile(title string, exts []string, then func(path string)) {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil || r == nil {
			return
		}
		r.Close()
		then(r.URI().Path())
	}, w.win)
	w.showFileDialog(d, title, exts)
}

// chooseModel asks for a model snapshot folder, then shows its report.
func (w *Window) chooseModel() {
	d := dialog.NewFolderOpen(func(u fyne.ListableURI, err error) {
		if err != nil || u == nil {
			return
		}
		w.reportFor = u.Path()
		w.s.Model().Use(u.Path())
	}, w.win)
	w.showFileDialog(d, "Choose the MiniMax-H3 folder (the one holding FL2VA/ and Ref2VA/)", nil)
}

// applyModelReport shows the report of a folder the user just chose, once
// it has been inspected.
func (w *Window) applyModelReport(sn studio.Snapshot) {
	if w.reportFor == "" || sn.Model.Loading || sn.Model.Info.Dir != w.reportFor {
		return
	}
	w.reportFor = ""
	if sn.Model.Ready && w.opts.Prefs != nil {
		w.opts.Prefs.SetModelDir(sn.Model.Info.Dir)
	}
	w.showModelReport()
}

// showModelReport shows the current model's report (the same text as
// `h3studio info`).
func (w *Window) showModelReport() {
	m := w.snap.Model
	var head *widget.Label
	switch {
	case m.Ready:
		head = widget.NewLabel("This folder can be used: " + m.Info.Name + ".")
		head.Importance = widget.SuccessImportance
	case m.Loading:
		head = widget.NewLabel("The folder is still being checked.")
	default:
		msg := m.Info.Problem
		if msg == "" {
			msg = m.Err
		}
		head = widget.NewLabel("This folder can't be used yet: " + strings.TrimSuffix(msg, ".") + ". H3 Studio keeps watching it and checks again as files arrive.")
		head.Importance = widget.DangerImportance
	}
	head.Wrapping = fyne.TextWrapWord
	report := m.Info.Report
	if report == "" {
		report = "(no report)"
	}
	text := widget.NewLabel(report)
	text.TextStyle.Monospace = true
	text.Selectable = true
	scroll := container.NewScroll(text)
	scroll.SetMinSize(fyne.NewSize(640, 320))
	other := widget.NewButton("Choose Another Folder…", w.chooseModel)
	demo := widget.NewButton("Use the Demo Checkpoint", w.s.Model().UseDemo)
	content := container.NewBorder(container.NewVBox(head, subtle(m.Info.Dir)), container.NewHBox(other, demo), nil, nil, scroll)
	d := dialog.NewCustom("Model folder", "Close", content, w.win)
	d.Resize(w.dialogSize())
	d.Show()
}

func confirmDialog(win fyne.Window, title, msg, confirm string, yes func()) {
	l := widget.NewLabel(msg)
	l.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustomConfirm(title, confirm, "Keep Working", container.NewGridWrap(fyne.NewSize(420, 90), l), func(ok bool) {
		if ok {
			yes()
		}
	}, win)
	d.Show()
}

func (w *Window) confirmDelete(t studio.Take) {
	confirmDialog(w.win, "Move “"+t.Meta.Title+"” to the Trash?",
		"Its folder — video, sound, thumbnail and take.json — goes to the Trash, where you can still recover it.",
		"Move to Trash", func() { w.s.Takes().Delete(t.ID) })
}

func (w *Window) reveal(path string) {
	if w.opts.Reveal == nil {
		w.s.Notify(studio.Info, path)
		return
	}
	if err := w.opts.Reveal(path); err != nil {
		w.s.Notify(studio.Warn, "The folder can't be shown: "+err.Error())
	}
}

// viewerTake is the take in the viewer (or the selected one).
func (w *Window) viewerTake() (studio.Take, bool) {
	if t, ok := w.library.selected(); ok {
		return t, true
	}
	w.s.Notify(studio.Info, "Choose a take in the library first.")
	return studio.Take{}, false
}

func (w *Window) saveDialog(title, name string, exts []string, then func(path string)) {
	d := dialog.NewFileSave(func(wc fyne.URIWriteCloser, err error) {
		if err != nil || wc == nil {
			return
		}
		p := wc.URI().Path()
		wc.Close()
		then(p)
	}, w.win)
	d.SetFileName(name)
	w.showFileDialog(d, title, exts)
}

func exportName(t studio.Take, ext string) string { return t.ID + ext }

func (w *Window) exportMP4() {
	t, ok := w.viewerTake()
	if !ok {
		return
	}
	if !t.Has(studio.VideoFile) {
		w.s.Notify(studio.Warn, "“"+t.Meta.Title+"” has no MP4: this build has no MP4 writer yet. Export Frames… and Export Audio… still work.")
		return
	}
	w.saveDialog("Export MP4", exportName(t, ".mp4"), []string{".mp4"}, func(p string) { w.s.Takes().ExportMP4(t.ID, p) })
}

func (w *Window) exportAudio() {
	t, ok := w.viewerTake()
	if !ok {
		return
	}
	w.saveDialog("Export Audio", exportName(t, ".wav"), []string{".wav"}, func(p string) { w.s.Takes().ExportAudio(t.ID, p) })
}

func (w *Window) exportFrames() {
	t, ok := w.viewerTake()
	if !ok {
		return
	}
	d := dialog.NewFolderOpen(func(u fyne.ListableURI, err error) {
		if err != nil || u == nil {
			return
		}
		w.s.Takes().ExportFrames(t.ID, filepath.Join(u.Path(), t.ID+"-frames"))
	}, w.win)
	w.showFileDialog(d, "Export frames into a new folder inside…", nil)
}

func (w *Window) showAbout() {
	icon := widget.NewIcon(fyne.NewStaticResource("icon.png", resources.Icon()))
	iconBox := container.NewCenter(container.NewGridWrap(fyne.NewSize(96, 96), icon))
	title := widget.NewLabelWithStyle("H3 Studio", fyne.TextAlignCenter, fyne.TextStyle{Bold: true})
	ver := widget.NewLabelWithStyle("Version "+w.opts.Version, fyne.TextAlignCenter, fyne.TextStyle{})
	about := widget.NewLabel("Runs the open-weights MiniMax-H3 video and sound model on this machine. " +
		"Model: " + w.snap.Model.Info.Name + ". Device: " + w.snap.Device + ".\n\n" +
		"MiniMax H3 is licensed by MiniMax under the MiniMax H3 Community License; its terms decide where and how it may be used.")
	about.Wrapping = fyne.TextWrapWord
	about.Alignment = fyne.TextAlignCenter
	content := container.NewVBox(iconBox, title, ver, container.NewGridWrap(fyne.NewSize(420, 120), about))
	dialog.ShowCustom("About H3 Studio", "Close", content, w.win)
}

func (w *Window) showSettings() {
	sn := w.snap
	lib := widget.NewLabel(sn.LibraryDir)
	lib.Truncation = fyne.TextTruncateEllipsis
	libBtn := widget.NewButton("Change…", func() {
		d := dialog.NewFolderOpen(func(u fyne.ListableURI, err error) {
			if err != nil || u == nil {
				return
			}
			if err := w.s.SetLibrary(u.Path()); err != nil {
				w.s.Notify(studio.Fail, "That folder can't hold the library: "+err.Error())
				return
			}
			if w.opts.Prefs != nil {
				w.opts.Prefs.SetLibraryDir(u.Path())
			}
		}, w.win)
		d.Resize(w.dialogSize())
		d.Show()
	})
	model := widget.NewLabel(sn.Model.Info.Name + "\n" + sn.Model.Info.Dir)
	model.Wrapping = fyne.TextWrapWord
	modelBtns := container.NewHBox(widget.NewButton("Choose…", w.chooseModel), widget.NewButton("Use Demo", w.s.Model().UseDemo), widget.NewButton("Report…", w.showModelReport))
	keep := widget.NewCheck("Keep the prompt's label and alignment lines in step with the slots", w.s.Compose().SetKeepLabels)
	keep.SetChecked(sn.Draft.KeepLabels)
	sound := "Sound plays through the system output when you press play."
	if w.opts.Sound != nil && w.opts.Sound.Notice() != "" {
		sound = w.opts.Sound.Notice()
	}
	// The automatic memory mode's quality floor: the same setting as
	// Compose ▸ Memory's, kept with the draft's settings.
	var floors []string
	for _, q := range studio.MemoryQualities {
		floors = append(floors, q.Label)
	}
	floor := widget.NewSelect(floors, func(l string) {
		for _, q := range studio.MemoryQualities {
			if q.Label == l {
				w.s.Compose().SetMemoryQuality(q.Floor)
			}
		}
	})
	floor.SetSelected(studio.MemoryQualityOf(sn.Draft.Settings.MemoryQuality).Label)
	form := widget.NewForm(
		widget.NewFormItem("Library folder", container.NewBorder(nil, nil, nil, libBtn, lib)),
		widget.NewFormItem("Model", container.NewVBox(model, modelBtns)),
		widget.NewFormItem("Prompt", keep),
		widget.NewFormItem("Memory", container.NewVBox(floor,
			subtle("Automatic memory mode: the quality it may trade for speed or fit (also under Compose ▸ Memory)."))),
		widget.NewFormItem("Sound", subtle(sound)),
	)
	if api := w.opts.LocalAPI; api != nil {
		form.AppendItem(widget.NewFormItem("Local API", w.localAPISetting(api)))
	}
	if srv := w.opts.Server; srv != nil {
		form.AppendItem(widget.NewFormItem("Run on server", w.serverSetting(srv)))
	}
	d := dialog.NewCustom("Settings", "Close", form, w.win)
	d.Resize(fyne.NewSize(680, 600))
	d.Show()
}

// localAPISetting is the Local API switch (off by default) with the
// address and the token to paste into a script while it is on.
func (w *Window) localAPISetting(api LocalAPI) fyne.CanvasObject {
	addr := subtle("")
	token := widget.NewEntry()
	token.Disable() // selectable, not editable
	info := container.NewVBox(addr, token)
	show := func() {
		if api.Enabled() {
			addr.SetText("OpenAI- and SGLang-style clients: " + api.Address() + " with the bearer token below. Takes join this window's queue.")
			token.SetText(api.Token())
			info.Show()
		} else {
			info.Hide()
		}
	}
	check := widget.NewCheck("Serve /v1/videos on this Mac (127.0.0.1 only)", nil)
	check.SetChecked(api.Enabled())
	check.OnChanged = func(on bool) {
		if err := api.SetEnabled(on); err != nil {
			w.s.Notify(studio.Fail, "The local API could not start: "+err.Error())
			check.SetChecked(false)
		}
		show()
	}
	show()
	return container.NewVBox(check, info)
}

// serverSetting is Run on server: the server's URL, token, kind and a
// shared folder, and the switch that sends new takes there.
func (w *Window) serverSetting(srv RemoteServer) fyne.CanvasObject {
	url, kind, shared, on := srv.Current()
	urlE := widget.NewEntry()
	urlE.SetPlaceHolder("http://gpu-box:30010")
	urlE.SetText(url)
	tokE := widget.NewPasswordEntry()
	tokE.SetPlaceHolder("token (kept in the Keychain; empty keeps the stored one)")
	mapE := widget.NewEntry()
	mapE.SetPlaceHolder("shared folder: /Volumes/media=/data/minimax-h3")
	mapE.SetText(shared)
	kindS := widget.NewSelect([]string{"SGLang Diffusion", "H3 Studio"}, nil)
	kindS.SetSelected("SGLang Diffusion")
	if kind == "h3studio" {
		kindS.SetSelected("H3 Studio")
	}
	kindOf := func() string {
		if kindS.Selected == "H3 Studio" {
			return "h3studio"
		}
		return "sglang"
	}
	check := widget.NewCheck("Send new takes to this server (they are saved in this library)", nil)
	check.SetChecked(on)
	check.OnChanged = func(on bool) {
		if err := srv.Apply(urlE.Text, tokE.Text, kindOf(), mapE.Text, on); err != nil {
			w.s.Notify(studio.Fail, "Run on server: "+err.Error())
			check.SetChecked(false)
			return
		}
		tokE.SetText("")
		if on {
			w.s.Notify(studio.Info, "New takes run on "+urlE.Text+".")
		}
	}
	return container.NewVBox(container.NewGridWithColumns(2, urlE, kindS), tokE, mapE, check)
}

// showKeys lists the shortcuts in two aligned columns (a grid, not tabs:
// Fyne expands tabs by bytes, which split ⌘ and ↩ into replacement
// characters).
func (w *Window) showKeys() {
	var cells []fyne.CanvasObject
	for _, k := range shortcutList() {
		key := widget.NewLabelWithStyle(k[0], fyne.TextAlignTrailing, fyne.TextStyle{Bold: true})
		cells = append(cells, key, widget.NewLabel(k[1]))
	}
	dialog.ShowCustom("Keyboard Shortcuts", "Close", container.New(layout.NewFormLayout(), cells...), w.win)
}

func (w *Window) showPromptHelp() {
	b := w.s.Builder()
	var sb strings.Builder
	for _, t := range []resources.Template{b.Base, b.Ref} {
		fmt.Fprintf(&sb, "## %s\n\n%s\n\n", t.Title, t.About)
		for _, f := range t.Fields {
			fmt.Fprintf(&sb, "- **%s** (`%s`): %s\n", f.Title, f.Name, f.Hint)
		}
		sb.WriteString("\n")
	}
	rt := widget.NewRichTextFromMarkdown(sb.String())
	rt.Wrapping = fyne.TextWrapWord
	sc := container.NewVScroll(rt)
	d := dialog.NewCustom("The MiniMax-H3 prompt format", "Close", sc, w.win)
	d.Resize(w.dialogSize())
	d.Show()
}

// showBuilder edits the prompt section by section.
func (w *Window) showBuilder() {
	b := w.s.Builder()
	sn := w.snap
	tpl := b.Template(sn.Draft.Prompt)
	if tpl == nil {
		if len(sn.Draft.References) > 0 {
			tpl = &b.Ref
		} else {
			tpl = &b.Base
		}
	}
	t := *tpl
	secs := studio.Split(studio.Structure(sn.Draft.Prompt, t), t)
	entries := map[string]*widget.Entry{}
	box := container.NewVBox()
	about := subtle(t.About)
	box.Add(about)
	if t.Name == "base" && secs.Preamble != "" {
		box.Add(widget.NewLabelWithStyle("First line (follows the frame slots and the length)", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
		pre := subtle(secs.Preamble)
		box.Add(pre)
	}
	for _, f := range t.Fields {
		e := widget.NewMultiLineEntry()
		e.Wrapping = fyne.TextWrapWord
		e.SetMinRowsVisible(max(2, f.Lines))
		e.SetText(secs.Fields[f.Name])
		e.SetPlaceHolder(f.Hint)
		entries[f.Name] = e
		box.Add(widget.NewLabelWithStyle(f.Title, fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
		box.Add(e)
		box.Add(subtle(f.Hint))
	}
	sc := container.NewVScroll(box)
	d := dialog.NewCustomConfirm("Prompt builder — "+t.Title, "Apply", "Cancel", sc, func(ok bool) {
		if !ok {
			return
		}
		for name, e := range entries {
			secs.Fields[name] = e.Text
		}
		w.s.Compose().SetPrompt(studio.Join(secs, t))
		w.s.Compose().TidyPrompt()
	}, w.win)
	d.Resize(w.dialogSize())
	d.Show()
}

var _ = theme.Padding
