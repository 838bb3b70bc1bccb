package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"h3studio/engine/media"
	"h3studio/ui/studio/sequence"
)

func init() {
	register(&command{name: "sequence", summary: "export a timeline (sequence.json) as one MP4", run: runSequence})
}

func runSequence(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "export" {
		fmt.Fprintln(stderr, "usage: h3studio sequence export SEQUENCE.json -o OUT.mp4 [--quality Q] [--render]")
		return 2
	}
	fs := newFlagSet("sequence export", stderr,
		"usage: h3studio sequence export SEQUENCE.json -o OUT.mp4 [flags]",
		"Joins the sequence's clips (trimmed, with their cuts and crossfades, muted clips silent,",
		"the extra sound track mixed in) into one MP4: H.264 24 fps, AAC 32 kHz stereo. This is the",
		"studio's File ▸ Export Sequence…. A missing clip is named and nothing is written.",
	)
	out := fs.String("o", "", "output `MP4` file")
	quality := fs.Float64("quality", 0, "H.264 quality in (0, 1] (0: the default, 0.75)")
	render := fs.Bool("render", false, "render every frame through the MP4 writer even where the platform composes natively")
	quiet := fs.Bool("q", false, "no progress lines")
	// flags may come before or after the sequence file
	rest := args[1:]
	var pos []string
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return 2
		}
		rest = fs.Args()
		if len(rest) > 0 {
			pos = append(pos, rest[0])
			rest = rest[1:]
		}
	}
	if len(pos) != 1 || *out == "" {
		fs.Usage()
		return 2
	}
	path := pos[0]
	seq, err := sequence.Load(path)
	if err != nil {
		fmt.Fprintf(stderr, "h3studio sequence export: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	last := time.Time{}
	o := media.ExportOptions{MP4: media.MP4Options{Quality: *quality}, Render: *render}
	if !*quiet {
		o.Progress = func(done, total int) {
			if now := time.Now(); now.Sub(last) > time.Second || done == total {
				last = now
				fmt.Fprintf(stdout, "frame %d/%d\n", done, total)
			}
		}
	}
	if err := sequence.Export(ctx, path, seq, *out, o); err != nil {
		fmt.Fprintf(stderr, "h3studio sequence export: %v (nothing was written)\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s in %.1f s\n", *out, time.Since(start).Seconds())
	return 0
}
