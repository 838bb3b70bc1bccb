package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"h3studio/engine"
)

// progressPrinter renders engine events on a terminal as one updating bar
// per phase, or, when the output is not a terminal, as plain lines (one per
// change, each written with a single Write so pipes see whole lines).
type progressPrinter struct {
	w        io.Writer
	tty      bool
	phase    engine.Phase
	done     int
	open     bool // a bar line without its newline
	lastDraw time.Time
}

func newProgressPrinter(w io.Writer) *progressPrinter {
	return &progressPrinter{w: w, tty: isTerminal(w)}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Event prints e.
func (p *progressPrinter) Event(e engine.Event) {
	if e.Phase == p.phase && e.Done == p.done && e.Preview == nil && e.Message == "" {
		return
	}
	if e.Phase != p.phase && p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
	newPhase := e.Phase != p.phase
	p.phase, p.done = e.Phase, e.Done
	if e.Total == 0 && e.Message == "" {
		return
	}
	if !p.tty {
		line := fmt.Sprintf("%-13s %d/%d", e.Phase, e.Done, e.Total)
		if e.Total == 0 {
			line = string(e.Phase)
		}
		if e.Elapsed > 0 {
			line += "  elapsed " + clock(e.Elapsed)
		}
		if e.ETA > 0 {
			line += "  eta " + clock(e.ETA)
		}
		if e.Message != "" {
			line += "  " + e.Message
		}
		io.WriteString(p.w, line+"\n")
		return
	}
	// Terminal: redraw at most 20 times a second, always at phase ends.
	now := time.Now()
	if !newPhase && e.Done < e.Total && now.Sub(p.lastDraw) < 50*time.Millisecond {
		return
	}
	p.lastDraw = now
	const width = 30
	fill := 0
	if e.Total > 0 {
		fill = e.Done * width / e.Total
	}
	bar := strings.Repeat("█", fill) + strings.Repeat("░", width-fill)
	line := fmt.Sprintf("\r%-13s %s %4d/%-4d %s", e.Phase, bar, e.Done, e.Total, clock(e.Elapsed))
	if e.ETA > 0 {
		line += "  eta " + clock(e.ETA)
	}
	io.WriteString(p.w, line+"\x1b[K")
	p.open = true
	if e.Total > 0 && e.Done >= e.Total {
		io.WriteString(p.w, "\n")
		p.open = false
	}
}

// Finish ends an open bar line.
func (p *progressPrinter) Finish() {
	if p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
}

func clock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
