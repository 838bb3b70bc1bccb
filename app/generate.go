package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"h3studio/engine"
	"h3studio/engine/compute"
	"h3studio/engine/envconfig"
	"h3studio/engine/take"
)

// generate runs one request from the command line.
func generate(ctx context.Context, a generateArgs, stdout, stderr io.Writer) int {
	oracles, err := envconfig.Oracles()
	if err != nil {
		fmt.Fprintf(stderr, "h3studio generate: %v\n", err)
		return 2
	}
	out, err := openSinks(a)
	if err != nil {
		fmt.Fprintf(stderr, "h3studio generate: %v\n", err)
		if errors.Is(err, errNoOutput) {
			return 2
		}
		return 1
	}
	// Until publish, every output is staged: any failure or a cancel
	// discards them all, and the message can say nothing was written.
	failed := func(code int, format string, args ...any) int {
		out.sink.Abort()
		out.stage.discard()
		fmt.Fprintf(stderr, "h3studio generate: "+format+"\n", args...)
		return code
	}
	b, err := openBackend(a.backend, stderr)
	if err != nil {
		return failed(2, "%v", err)
	}
	defer b.Close()
	var eb compute.Backend = b
	if a.deviceMemory > 0 || a.workingSet > 0 {
		eb = deviceMemory{Backend: b, memory: a.deviceMemory, workingSet: a.workingSet}
	}
	s, err := engine.Open(engine.Options{ModelDir: a.modelDir, Backend: eb, Memory: a.req.Memory, Quant: a.quant, StreamVideoDecoder: a.ssd, Oracles: oracles, ProfileForwards: a.profile, RatesFile: ratesFile()})
	if err != nil {
		return failed(1, "%v", err)
	}
	defer s.Close()
	plan, err := s.Plan(a.req)
	if err != nil {
		if engine.IsRequestError(err) {
			return failed(2, "%v", err)
		}
		return failed(1, "%v", err)
	}
	for _, n := range plan.Notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	if plan.Memory != "" {
		peak := fmt.Sprintf("%.2f GiB", float64(plan.PeakBytes)/(1<<30))
		if plan.PeakBytes < 1<<30 {
			peak = fmt.Sprintf("%.1f MiB", float64(plan.PeakBytes)/(1<<20))
		}
		fmt.Fprintf(stderr, "memory: %s, predicted peak %s (%s)\n", plan.Memory, peak, plan.MemoryWhy)
	}
	outputs := out.paths
	pp := newProgressPrinter(stderr)
	res, err := s.Generate(ctx, plan.Request, out.sink, pp.Event)
	pp.Finish()
	switch {
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return failed(130, "cancelled; nothing was written")
	case err != nil && engine.IsRequestError(err):
		return failed(2, "%v", err)
	case err != nil:
		return failed(1, "%v", err)
	}
	printLoRAs(stderr, res.LoRAs)
	modelDir := a.modelDir
	if abs, err := filepath.Abs(modelDir); err == nil {
		modelDir = abs // the sidecar is read from beside the output, not from here
	}
	sc := take.FromResult(res, version, modelDir, b.Device().Name, b.Name())
	sc.Outputs = outputs
	sides := []string{sidecarPath(a)}
	if a.framesDir != "" && sides[0] != filepath.Join(a.framesDir, take.File) {
		// The frames folder describes its frames too: a take.json left
		// there by an earlier take would otherwise sit beside these.
		sides = append(sides, filepath.Join(a.framesDir, take.File))
	}
	// Publishing is a few renames; an interrupt now would leave part of
	// the take, so it is not interruptible.
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	if err := out.publish(sides, sc); err != nil {
		fmt.Fprintf(stderr, "h3studio generate: %v\n", err)
		return 1
	}
	for _, k := range []string{"video", "frames", "audio"} {
		if p := outputs[k]; p != "" {
			fmt.Fprintf(stderr, "wrote %s\n", p)
		}
	}
	for _, side := range sides {
		fmt.Fprintf(stderr, "wrote %s\n", side)
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "note: the interrupt came while the finished take was being saved; the take was kept whole")
	}
	if a.profile {
		printProfile(stdout, res)
	}
	return 0
}

// checkOutputs refuses outputs that would overwrite each other: -o x.json
// (the sidecar is x.json too), --wav a.json beside -o a.mp4, the same path
// for -o and --wav, or a frames folder at a file output's path. Paths are
// compared after cleaning and case-folding, as macOS's default file system
// does not tell x.json from X.JSON.
func checkOutputs(a generateArgs) error {
	type out struct{ flag, path string }
	var outs []out
	for _, o := range []out{{"-o", a.output}, {"--wav", a.wav}, {"--frames-dir", a.framesDir}} {
		if o.path != "" {
			outs = append(outs, o)
		}
	}
	if len(outs) == 0 {
		return nil
	}
	outs = append(outs, out{"the sidecar", sidecarPath(a)})
	if a.framesDir != "" && sidecarPath(a) != filepath.Join(a.framesDir, take.File) {
		outs = append(outs, out{"the frames folder's " + take.File, filepath.Join(a.framesDir, take.File)})
	}
	abs := func(p string) string {
		if q, err := filepath.Abs(p); err == nil {
			return q
		}
		return filepath.Clean(p)
	}
	for i := range outs {
		for j := i + 1; j < len(outs); j++ {
			if strings.EqualFold(abs(outs[i].path), abs(outs[j].path)) {
				return fmt.Errorf("invalid request: %s and %s are the same path (%s): one would overwrite the other", outs[i].flag, outs[j].flag, outs[j].path)
			}
		}
	}
	return nil
}

// sidecarPath is <name>.json beside the MP4, or take.json in the frames
// folder (or beside the WAV) when there is no MP4.
func sidecarPath(a generateArgs) string {
	switch {
	case a.output != "":
		return strings.TrimSuffix(a.output, filepath.Ext(a.output)) + ".json"
	case a.framesDir != "":
		return filepath.Join(a.framesDir, take.File)
	case a.wav != "":
		return strings.TrimSuffix(a.wav, filepath.Ext(a.wav)) + ".json"
	}
	return take.File
}

func printProfile(w io.Writer, res engine.Result) {
	fmt.Fprintf(w, "%-13s %9s %8s %-10s %11s %10s %12s\n", "phase", "seconds", "units", "", "dispatches", "GFLOP", "peak MiB")
	var wall float64
	for _, p := range res.Profile {
		wall += p.Wall.Seconds()
		fmt.Fprintf(w, "%-13s %9.3f %8d %-10s %11d %10.2f %12.1f\n", p.Phase, p.Wall.Seconds(), p.Units, p.Unit, p.Dispatches, p.FLOPs/1e9, float64(p.PeakBytes)/(1<<20))
	}
	fmt.Fprintf(w, "%-13s %9.3f\n", "total", wall)
	fmt.Fprintf(w, "peak tracked storage %.1f MiB", float64(res.PeakBytes)/(1<<20))
	if res.Plan.PeakBytes > 0 {
		fmt.Fprintf(w, " (predicted %.1f MiB)", float64(res.Plan.PeakBytes)/(1<<20))
	}
	fmt.Fprintln(w)
	if res.Cached {
		fmt.Fprintln(w, "text conditioning: from the cache")
	}
	if res.Forwards != nil && res.Forwards.Forwards > 0 {
		fmt.Fprintln(w, res.Forwards.String())
	}
}
