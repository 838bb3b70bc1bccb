package ui

import (
	"image/color"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/engine"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// TestReorderByDrag drags a reference's handle up past two rows: the list
// is reordered, the badges renumber, and the Ref2VA prompt's label lines
// follow (the line written about the moved picture keeps its words under
// its new label).
func TestReorderByDrag(t *testing.T) {
	h := newHarness(t, fakeengine.Options{}, false)
	a := h.file("a.png", pngBytes(color.RGBA{200, 0, 0, 255}))
	b := h.file("b.png", pngBytes(color.RGBA{0, 200, 0, 255}))
	c := h.file("c.png", pngBytes(color.RGBA{0, 0, 200, 255}))
	h.s.Compose().ApplyTemplate("ref2va")
	h.w.HandleDrop(fyne.NewPos(700, 300), uris(a, b, c))
	sn := h.settle(func(sn studio.Snapshot) bool {
		return len(sn.Draft.References) == 3 && sn.Draft.References[2].Media.State == studio.MediaReady
	})
	h.s.Compose().SetPrompt(strings.Replace(sn.Draft.Prompt, "<Picture 3> is", "<Picture 3> is the blue card.", 1))
	sn = h.settle(func(sn studio.Snapshot) bool { return strings.Contains(sn.Draft.Prompt, "blue card") })
	blue := sn.Draft.References[2].ID
	row := h.w.compose.refRows[blue]
	step := row.box.Size().Height + theme.Padding()
	if row.box.Size().Height <= 0 {
		t.Fatal("the reference row was never laid out")
	}
	row.handle.Dragged(&fyne.DragEvent{Dragged: fyne.NewDelta(0, -step)})
	row.handle.Dragged(&fyne.DragEvent{Dragged: fyne.NewDelta(0, -step)})
	row.handle.DragEnd()
	sn = h.settle(func(sn studio.Snapshot) bool { return sn.Draft.References[0].ID == blue })
	var order []string
	for _, r := range sn.Draft.References {
		order = append(order, filepath.Base(r.Media.Path))
	}
	if got := strings.Join(order, ","); got != "c.png,a.png,b.png" {
		t.Errorf("order after the drag: %s", got)
	}
	if got := h.w.compose.refRows[blue].badge.Text; got != "Picture 1" {
		t.Errorf("the moved picture's badge says %q", got)
	}
	if !strings.Contains(sn.Draft.Prompt, "<Picture 1> is the blue card.") || strings.Contains(sn.Draft.Prompt, "<Picture 3> is the blue card.") {
		t.Errorf("the label lines did not follow the drag:\n%s", sn.Draft.Prompt)
	}
	// A row followed by its inline problem (a broken file) counts as one
	// place: the last row dragged onto the first broken one's place lands
	// there, past two rows with their problems.
	d := h.file("d.png", pngBytes(color.RGBA{90, 90, 90, 255}))
	h.s.Compose().AddReferences([]string{d})
	broken := h.file("broken.png", []byte("\x89PNG\r\n\x1a\ntruncated"))
	broken2 := h.file("broken2.png", []byte("\x89PNG\r\n\x1a\ntruncated too"))
	h.s.Compose().ReplaceReference(sn.Draft.References[1].ID, broken)
	h.s.Compose().ReplaceReference(sn.Draft.References[2].ID, broken2)
	sn = h.settle(func(sn studio.Snapshot) bool {
		return len(sn.Draft.References) == 4 && sn.Draft.References[1].Media.State == studio.MediaBroken &&
			sn.Draft.References[2].Media.State == studio.MediaBroken && sn.Draft.References[3].Media.State == studio.MediaReady
	})
	b2 := sn.Draft.References[2].ID
	drv := fyne.CurrentApp().Driver()
	dRow, bRow := h.w.compose.refRows[sn.Draft.References[3].ID], h.w.compose.refRows[sn.Draft.References[1].ID]
	dy := drv.AbsolutePositionForObject(bRow.box).Y - drv.AbsolutePositionForObject(dRow.box).Y
	dRow.handle.Dragged(&fyne.DragEvent{Dragged: fyne.NewDelta(0, dy)})
	dRow.handle.DragEnd()
	sn = h.settle(func(sn studio.Snapshot) bool { return sn.Draft.References[3].ID != dRow.id })
	if sn.Draft.References[1].ID != dRow.id {
		var order []string
		for _, r := range sn.Draft.References {
			order = append(order, filepath.Base(r.Media.Path))
		}
		t.Errorf("dragged onto the second place, the list is %v", order)
	}
	h.s.Compose().RemoveReference(bRow.id)
	h.s.Compose().RemoveReference(b2)
	h.s.Compose().RemoveReference(dRow.id)
	h.s.Compose().AddReferences([]string{b})
	sn = h.settle(func(sn studio.Snapshot) bool {
		return len(sn.Draft.References) == 2 && sn.Draft.References[1].Media.State == studio.MediaReady
	})

	// Replacing a picture by a sound keeps its place and relabels.
	h.s.Compose().ReplaceReference(sn.Draft.References[1].ID, h.wav("voice.wav", 3))
	sn = h.settle(func(sn studio.Snapshot) bool { return sn.Draft.References[1].Media.State == studio.MediaReady })
	if got := strings.Join(sn.Labels, ","); got != "Picture 1,Audio 1" {
		t.Errorf("labels after replacing: %s", got)
	}
}

func uris(ps ...string) []fyne.URI {
	var u []fyne.URI
	for _, p := range ps {
		u = append(u, storage.NewFileURI(p))
	}
	return u
}

// TestLibraryActions drives the library's buttons on a finished take: Show
// reveals its folder, Reference adds it to the reference list (its last
// frame, as this build writes no MP4), and Trash asks, then moves the
// take's folder to the Trash.
func TestLibraryActions(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	h := newHarness(t, fakeengine.Options{}, false)
	h.s.Compose().SetSettings(studio.DemoSettings())
	h.s.Compose().SetPrompt("A red fox walks through fresh snow.")
	h.settle(func(sn studio.Snapshot) bool { return sn.CanGenerate })
	if _, err := h.s.Queue().Generate(); err != nil {
		t.Fatal(err)
	}
	sn := h.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == 1 && sn.Viewer.TakeID == sn.Takes[0].ID })
	take := sn.Takes[0]
	button := func(label string) *widget.Button {
		t.Helper()
		b := findButton(h.w.library.actions, label)
		if b == nil {
			t.Fatalf("no %q button in the library", label)
		}
		return b
	}

	test.Tap(button("Show"))
	if len(h.revealed) != 1 || h.revealed[0] != take.Dir {
		t.Errorf("Show revealed %v, want %s", h.revealed, take.Dir)
	}

	test.Tap(button("Reference"))
	sn = h.settle(func(sn studio.Snapshot) bool {
		return len(sn.Draft.References) == 1 && sn.Draft.References[0].Media.State == studio.MediaReady
	})
	if got := sn.Draft.References[0].Media.Path; got != filepath.Join(take.Dir, studio.LastFile) || sn.Task != "ref2va" {
		t.Errorf("reference %s, task %s", got, sn.Task)
	}

	test.Tap(button("Trash"))
	h.tapInDialog("Move to Trash")
	h.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == 0 })
	if _, err := os.Stat(take.Dir); !os.IsNotExist(err) {
		t.Errorf("the take's folder is still in the library: %v", err)
	}
	trashed := filepath.Join(home, "data", "Trash", "files", filepath.Base(take.Dir), studio.TakeMetaFile)
	if _, err := os.Stat(trashed); err != nil {
		t.Errorf("the take is not in the Trash: %v", err)
	}
	sn = h.w.Snapshot()
	if r := sn.Draft.References[0].Media; r.State != studio.MediaMissing || sn.CanGenerate {
		t.Errorf("the reference taken from the trashed take: %+v (can generate %v)", r, sn.CanGenerate)
	}
	if !labelsContain(h.w.compose.refList, "moved or deleted") {
		t.Error("the list does not say the reference is gone")
	}
	if h.w.library.count.Text != "0 takes" || h.w.library.detail.Visible() {
		t.Errorf("library still shows %q (detail visible %v)", h.w.library.count.Text, h.w.library.detail.Visible())
	}
}

// TestUnusableModelFolder chooses a folder that can't be used: the report
// opens naming the problem, Generate is disabled saying why, and the status
// bar says so too.
func TestUnusableModelFolder(t *testing.T) {
	h := newHarness(t, fakeengine.Options{}, false)
	h.s.Compose().SetPrompt("A fox.")
	dir := filepath.Join(h.dir, "not-there")
	h.w.reportFor = dir // as the folder dialog does
	h.s.Model().Use(dir)
	sn := h.settle(func(sn studio.Snapshot) bool { return !sn.Model.Loading && sn.Model.Info.Dir == dir })
	if sn.CanGenerate || !h.w.compose.generate.Disabled() || !strings.Contains(h.w.compose.genNote.Text, "No usable model") {
		t.Errorf("generate %v, note %q", h.w.compose.generate.Disabled(), h.w.compose.genNote.Text)
	}
	text := h.dialogText("the model report after choosing the folder")
	if !strings.Contains(text, "can't be used yet") || !strings.Contains(text, "not-there") {
		t.Errorf("the report does not name the problem:\n%s", text)
	}
	if strings.Contains(text, "..") {
		t.Errorf("the report's sentence ends twice:\n%s", text)
	}
}

// TestSettingsControls works every settings control in Compose and checks
// the request the engine is asked to plan: canvas, length, quality preset,
// the Advanced controls (which make the settings custom, and whose rule
// violations show inline and block Generate), the dice and the memory mode.
func TestSettingsControls(t *testing.T) {
	h := newHarness(t, fakeengine.Options{}, false)
	c := h.w.compose
	h.s.Compose().SetPrompt("A fox.")
	plan := func(cond func(studio.Snapshot) bool) studio.Snapshot {
		t.Helper()
		return h.settle(func(sn studio.Snapshot) bool { return sn.Plan != nil && cond(sn) })
	}

	c.canvasSel.SetSelected("9:16 · 768×1344")
	sn := plan(func(sn studio.Snapshot) bool { return sn.Plan.Request.Width == 768 })
	if r := sn.Plan.Request; r.Height != 1344 {
		t.Errorf("canvas: planned %d×%d", r.Width, r.Height)
	}
	c.lengthSel.SetText(studio.FormatLength(56)) // picked from the list
	sn = plan(func(sn studio.Snapshot) bool { return sn.Plan.Request.Frames == 56 })

	c.qualitySel.SetSelected("Fast")
	sn = plan(func(sn studio.Snapshot) bool { return sn.Plan.Request.Preset == "fast" })
	// The studio's Fast is the engine's one preset table's Fast.
	if ps, r := engine.Presets[engine.PresetFast], sn.Plan.Request; r.Steps != ps.Steps || r.Reuse != ps.Reuse || r.TokenReduction || sn.Draft.Settings.Custom() {
		t.Errorf("Fast planned steps %d reuse %d token reduction %v (custom %v), the preset table says steps %d reuse %d", r.Steps, r.Reuse, r.TokenReduction, sn.Draft.Settings.Custom(), ps.Steps, ps.Reuse)
	}
	if c.qualityNote.Text == "" {
		t.Error("the quality preset says nothing about its cost")
	}

	// Advanced: typed steps make the settings custom.
	c.steps.SetText("12")
	sn = plan(func(sn studio.Snapshot) bool { return sn.Plan.Request.Steps == 12 })
	if !sn.Draft.Settings.Custom() || !strings.Contains(c.advNote.Text, "Custom settings") {
		t.Errorf("custom %v, note %q", sn.Draft.Settings.Custom(), c.advNote.Text)
	}
	// Reuse and core reuse together break a rule: shown inline, Generate off.
	c.reuse.SetSelected("2")
	c.coreReuse.SetSelected("2")
	sn = h.settle(func(sn studio.Snapshot) bool {
		return sn.Draft.Settings.Speed.CoreReuse == 2 && sn.Draft.Settings.Speed.Reuse == 2
	})
	if !labelsContain(c.settingsMsgs, "Reuse and core reuse can't both be above 1") || !c.generate.Disabled() {
		t.Errorf("rule not shown inline (generate disabled %v)", c.generate.Disabled())
	}
	c.coreReuse.SetSelected("1")
	plan(func(sn studio.Snapshot) bool { return sn.CanGenerate })

	// The dice picks a new seed and shows it.
	before := sn.Draft.Settings.Seed
	test.Tap(c.dice)
	sn = plan(func(sn studio.Snapshot) bool { return sn.Draft.Settings.Seed != before })
	if c.seed.Text != strconv.FormatUint(sn.Draft.Settings.Seed, 10) || sn.Plan.Request.Seed != sn.Draft.Settings.Seed {
		t.Errorf("seed entry %q, planned seed %d, draft %d", c.seed.Text, sn.Plan.Request.Seed, sn.Draft.Settings.Seed)
	}

	c.memorySel.SetSelected("Streaming — least memory")
	sn = plan(func(sn studio.Snapshot) bool { return sn.Plan.Request.Memory == "streaming" })
	if h.w.status.memory.Text != "Memory mode: streaming" {
		t.Errorf("status bar %q", h.w.status.memory.Text)
	}
}

// TestQuietDetails checks three things a first start shows: the empty
// prompt's hint is quiet (not an error in red), the quality note of
// customised settings quotes the same estimate as Generate's note, and a
// library row's two lines fit the row height.
func TestQuietDetails(t *testing.T) {
	h := newHarness(t, fakeengine.Options{}, false)
	c := h.w.compose
	if len(c.promptMsgs.Objects) != 1 || c.promptMsgs.Objects[0].(*widget.Label).Importance != widget.LowImportance {
		t.Errorf("the empty prompt's hint is not quiet: %+v", c.promptMsgs.Objects)
	}
	custom := studio.DemoSettings()
	custom.Speed.Steps++ // a step count the preset does not have: custom
	h.s.Compose().SetSettings(custom)
	h.s.Compose().SetPrompt("A red fox walks through fresh snow.")
	sn := h.settle(func(sn studio.Snapshot) bool { return sn.Plan != nil && sn.Plan.Estimate > 0 })
	if len(c.promptMsgs.Objects) != 0 {
		t.Errorf("prompt problems shown for a written prompt")
	}
	est := "about " + fmtDuration(sn.Plan.Estimate)
	if !strings.Contains(c.qualityNote.Text, "customised under Advanced") || !strings.Contains(c.qualityNote.Text, est) || !strings.Contains(c.genNote.Text, est) {
		t.Errorf("quality note %q and Generate's note %q disagree on %q", c.qualityNote.Text, c.genNote.Text, est)
	}
	if _, err := h.s.Queue().Generate(); err != nil {
		t.Fatal(err)
	}
	h.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == 1 })
	l := h.w.library
	for i, it := range l.items {
		if it.header != "" {
			continue
		}
		row := l.newRow()
		l.updateRow(i, row)
		take := row.(*fyne.Container).Objects[1]
		if hgt := take.MinSize().Height; hgt > 58 {
			t.Errorf("a library row needs %v px but rows are 58 px high", hgt)
		}
	}
	for _, line := range strings.Split(l.dMeta.Text, "\n") {
		if len([]rune(line)) > 60 {
			t.Errorf("detail line too long for the panel: %q", line)
		}
	}
}

// TestKeyboardShortcutsDialog: the list is two aligned columns of plain
// text (tabs made Fyne split ⌘ and ↩ into replacement characters).
func TestKeyboardShortcutsDialog(t *testing.T) {
	h := newHarness(t, fakeengine.Options{}, false)
	h.w.showKeys()
	text := h.dialogText("the Keyboard Shortcuts window")
	for _, want := range []string{"Space", "play / pause", generateKey, cmdKey + "E", "export the take as MP4"} {
		if !strings.Contains(text, want) {
			t.Errorf("shortcuts lack %q:\n%s", want, text)
		}
	}
	if strings.ContainsAny(text, "\t↩\uFFFD") {
		t.Errorf("shortcut text holds tabs or glyphs the font lacks:\n%q", text)
	}
}

// TestMenus checks the main menu against the macOS conventions:
// File, Edit, View, Window, Help; About and Settings… (⌘,) labelled so Fyne
// moves them into the app menu on macOS; Open Model Folder…, Export MP4…
// (⌘E), Export Frames… and Export Audio… in File.
func TestMenus(t *testing.T) {
	h := newHarness(t, fakeengine.Options{}, false)
	m := h.w.mainMenu()
	var names []string
	items := map[string]*fyne.MenuItem{}
	for _, menu := range m.Items {
		names = append(names, menu.Label)
		for _, it := range menu.Items {
			items[menu.Label+"/"+it.Label] = it
		}
	}
	if got := strings.Join(names, ","); got != "File,Edit,View,Window,Help" {
		t.Errorf("menus %s", got)
	}
	for path, key := range map[string]fyne.KeyName{
		"File/Open Model Folder…": fyne.KeyO, "File/Export MP4…": fyne.KeyE, "File/Export Frames…": "",
		"File/Export Audio…": "", "Edit/Settings…": fyne.KeyComma, "Help/About": "", "File/Generate": fyne.KeyReturn,
		"File/Check the Model Folder Again": "",
	} {
		it := items[path]
		if it == nil || it.Action == nil {
			t.Errorf("no %s", path)
			continue
		}
		sc, _ := it.Shortcut.(*desktop.CustomShortcut)
		switch {
		case key == "" && it.Shortcut != nil:
			t.Errorf("%s has an unexpected shortcut", path)
		case key != "" && (sc == nil || sc.KeyName != key || sc.Modifier != fyne.KeyModifierShortcutDefault):
			t.Errorf("%s shortcut %+v, want the command key with %s", path, it.Shortcut, key)
		}
	}
}

// TestTypingWhileGenerating: a running take refreshes the window many times
// a second; a seed, steps or length being typed is not reset under the
// user's fingers.
func TestTypingWhileGenerating(t *testing.T) {
	h := newHarness(t, fakeengine.Options{}, false)
	c := h.w.compose
	canvas := h.w.Fyne().Canvas()
	poke := func() { h.s.Notify(studio.Info, "a change"); h.settle(func(studio.Snapshot) bool { return true }) }

	canvas.Focus(c.seed)
	c.seed.SetText("") // cleared, about to type a new seed
	poke()
	if c.seed.Text != "" {
		t.Errorf("the seed being typed was reset to %q", c.seed.Text)
	}
	test.Type(c.seed, "77")
	poke()
	if sn := h.w.Snapshot(); sn.Draft.Settings.Seed != 77 || c.seed.Text != "77" {
		t.Errorf("seed %d, field %q", sn.Draft.Settings.Seed, c.seed.Text)
	}
	test.Tap(c.dice) // the dice still writes into the focused field
	sn := h.settle(func(sn studio.Snapshot) bool { return sn.Draft.Settings.Seed != 77 })
	if c.seed.Text != strconv.FormatUint(sn.Draft.Settings.Seed, 10) {
		t.Errorf("dice: field %q, seed %d", c.seed.Text, sn.Draft.Settings.Seed)
	}

	canvas.Focus(c.lengthSel)
	c.lengthSel.SetText("5") // not submitted yet
	poke()
	if c.lengthSel.Text != "5" {
		t.Errorf("the length being typed was reset to %q", c.lengthSel.Text)
	}
	c.lengthSel.OnSubmitted(c.lengthSel.Text)
	h.settle(func(sn studio.Snapshot) bool { return sn.Draft.Settings.Frames == 124 })

	c.advanced.Open(0)
	canvas.Focus(c.steps)
	c.steps.SetText("")
	poke()
	if c.steps.Text != "" {
		t.Errorf("the steps being typed were reset to %q", c.steps.Text)
	}
	canvas.Unfocus()
	poke()
	if want := strconv.Itoa(h.w.Snapshot().Draft.Settings.Speed.Steps); c.steps.Text != want {
		t.Errorf("left empty, steps show %q, want %s", c.steps.Text, want)
	}
}
