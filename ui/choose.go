package ui

import (
	"fmt"
	"strconv"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"h3studio/ui/studio"
	"h3studio/ui/widgets"
)

// seedGrid is "Generate N seeds": one cell per queued take, filled as the
// takes finish, all playing the same frame in step (one clock for the
// grid); each cell puts its take on the timeline, and two ticked cells
// open the A/B view.
type seedGrid struct {
	w      *Window
	jobs   []studio.JobID
	cells  []*seedCell
	d      dialog.Dialog
	frame  int
	play   bool
	start  time.Time
	anim   *fyne.Animation
	status *widget.Label
}

type seedCell struct {
	player  *widgets.Player
	label   *widget.Label
	use     *widget.Button
	pick    *widget.Check
	take    string
	clip    *studio.Clip
	loading bool
}

// showSeeds asks how many seeds, queues them and opens the grid.
func (w *Window) showSeeds() {
	var opts []string
	for n := studio.MinSeeds; n <= studio.MaxSeeds; n++ {
		opts = append(opts, strconv.Itoa(n))
	}
	sel := widget.NewSelect(opts, nil)
	sel.SetSelected("4")
	dialog.ShowCustomConfirm("Generate seeds", "Generate", "Cancel",
		container.NewVBox(widget.NewLabel("One take of the draft per seed, shown side by side to choose from:"), sel),
		func(ok bool) {
			if !ok {
				return
			}
			n, _ := strconv.Atoi(sel.Selected)
			w.GenerateSeeds(n)
		}, w.win)
}

// GenerateSeeds queues n takes (one per seed) and opens their grid.
func (w *Window) GenerateSeeds(n int) *seedGrid {
	ids, err := w.s.Queue().GenerateSeeds(n)
	if err != nil {
		w.s.Notify(studio.Warn, "Can't generate: "+err.Error())
		return nil
	}
	g := &seedGrid{w: w, jobs: ids}
	cols := 2
	if n > 4 {
		cols = 3
	}
	grid := container.NewGridWithColumns(cols)
	for range ids {
		c := &seedCell{player: widgets.NewPlayer(), label: widget.NewLabel("queued…")}
		c.player.SetMessage("waiting for the take")
		c.player.Loop = true
		cell := c
		c.use = widget.NewButton("Use →", func() {
			if cell.take != "" {
				w.timeline.tl.AddTake(cell.take, -1)
				w.s.Notify(studio.Info, "The take is on the timeline.")
			}
		})
		c.use.Disable()
		c.pick = widget.NewCheck("A/B", nil)
		c.pick.Disable()
		g.cells = append(g.cells, c)
		grid.Add(container.NewBorder(nil, container.NewHBox(c.label, spacer(), c.pick, c.use), nil, nil, c.player))
	}
	g.status = subtle("")
	playB := widget.NewButton("Play / Pause", g.toggle)
	abB := widget.NewButton("Compare A/B", g.compare)
	content := container.NewBorder(nil, container.NewHBox(playB, abB, g.status), nil, nil, grid)
	g.d = dialog.NewCustom(fmt.Sprintf("%d seeds", n), "Close", content, w.win)
	g.d.SetOnClosed(func() {
		g.stop()
		w.seeds = nil
	})
	g.d.Resize(fyne.NewSize(900, 640))
	g.d.Show()
	w.seeds = g
	g.apply(w.snap)
	return g
}

// apply fills the cells whose takes have arrived.
func (g *seedGrid) apply(sn studio.Snapshot) {
	done := 0
	for k, id := range g.jobs {
		c := g.cells[k]
		take, ended := sn.JobTake(id)
		switch {
		case take != "" && c.take == "":
			c.take = take
			c.use.Enable()
			c.pick.Enable()
		case ended && take == "":
			c.label.SetText("failed")
		}
		if c.take != "" && !c.loading {
			// the library lists the take a moment after its job ends
			for _, t := range sn.Takes {
				if t.ID == c.take {
					c.label.SetText(fmt.Sprintf("seed %d", t.Meta.Seed))
					g.load(c, t)
				}
			}
		}
		if c.take != "" {
			done++
		}
	}
	g.status.SetText(fmt.Sprintf("%d of %d takes ready", done, len(g.jobs)))
}

func (g *seedGrid) load(c *seedCell, t studio.Take) {
	clip := g.w.timeline.tl.Clip(t.Dir)
	if clip == nil {
		return // loading; the next apply has it
	}
	c.loading = true
	c.clip = clip
	c.player.SetFrames(clip)
	c.player.Seek(g.frame)
}

// toggle plays or pauses every cell together: one clock, each cell shows
// the same frame (silent: the grid is for looking; A/B has sound).
func (g *seedGrid) toggle() {
	if g.play {
		g.stop()
		return
	}
	g.play = true
	g.start = time.Now().Add(-time.Duration(g.frame) * time.Second / 24)
	g.anim = &fyne.Animation{Duration: time.Hour, RepeatCount: fyne.AnimationRepeatForever, Tick: func(float32) { g.Tick(time.Now()) }}
	g.anim.Start()
}

// Tick shows the frame of the grid's clock at now on every cell.
func (g *seedGrid) Tick(now time.Time) {
	if !g.play {
		return
	}
	n := 0
	for _, c := range g.cells {
		n = max(n, c.clip.Len())
	}
	if n == 0 {
		return
	}
	g.frame = int(now.Sub(g.start).Seconds()*24) % n
	for _, c := range g.cells {
		if c.clip != nil {
			c.player.Seek(g.frame % c.clip.Len())
		}
	}
}

func (g *seedGrid) stop() {
	g.play = false
	if g.anim != nil {
		g.anim.Stop()
		g.anim = nil
	}
}

// compare opens the A/B view of the two ticked cells.
func (g *seedGrid) compare() {
	var picked []*seedCell
	for _, c := range g.cells {
		if c.pick.Checked && c.clip != nil {
			picked = append(picked, c)
		}
	}
	if len(picked) != 2 {
		g.w.s.Notify(studio.Warn, "Tick A/B on two finished takes to compare them.")
		return
	}
	g.w.showAB(picked[0].take, picked[0].clip, picked[1].take, picked[1].clip)
}

// abView is the A/B wipe of two takes: both at the same frame, playing in
// step, the sound from the side under the pointer.
type abView struct {
	w      *Window
	wipe   *widgets.Wipe
	player *widgets.Player // the clock and the frame (its frames are A's)
	clips  [2]*studio.Clip
	takes  [2]string
	side   int
}

// showAB opens the A/B view.
func (w *Window) showAB(a string, ca *studio.Clip, b string, cb *studio.Clip) *abView {
	v := &abView{w: w, clips: [2]*studio.Clip{ca, cb}, takes: [2]string{a, b}}
	v.wipe = widgets.NewWipe(ca, cb)
	v.player = widgets.NewPlayer()
	v.player.SetFrames(ca)
	if s := w.opts.Sound; s != nil {
		v.player.SetClock(s)
		s.SetAudio(ca.Audio)
	}
	v.player.OnChange = func() { v.wipe.SetFrame(v.player.Frame()) }
	v.wipe.OnSide = v.setSide
	useA := widget.NewButton("Use A →", func() { w.timeline.tl.AddTake(a, -1); w.s.Notify(studio.Info, "A is on the timeline.") })
	useB := widget.NewButton("Use B →", func() { w.timeline.tl.AddTake(b, -1); w.s.Notify(studio.Info, "B is on the timeline.") })
	play := widget.NewButton("Play / Pause", v.player.Toggle)
	content := container.NewBorder(nil, container.NewHBox(play, spacer(), useA, useB), nil, nil, v.wipe)
	d := dialog.NewCustom("A/B: drag the line; the sound is the side under the pointer", "Close", content, w.win)
	d.SetOnClosed(func() {
		v.player.Pause()
		v.player.SetClock(nil)
		w.viewer.restoreSound()
	})
	d.Resize(fyne.NewSize(820, 560))
	d.Show()
	return v
}

// setSide plays the sound of side (0: A, 1: B) from the current frame.
func (v *abView) setSide(side int) {
	if side == v.side || side < 0 || side > 1 {
		return
	}
	v.side = side
	if s := v.w.opts.Sound; s != nil {
		s.SetAudio(v.clips[side].Audio)
		if v.player.Playing() {
			v.player.Seek(v.player.Frame()) // restarts the clock on the new sound
		}
	}
}

// restoreSound gives the sound output back to what the viewer plays.
func (v *viewer) restoreSound() {
	s := v.w.opts.Sound
	if s == nil {
		return
	}
	switch {
	case v.seq != nil:
		s.SetAudio(v.seq.Audio)
	case v.clip != nil:
		s.SetAudio(v.clip.Audio)
	}
}
