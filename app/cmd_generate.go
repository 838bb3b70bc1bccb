package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"h3studio/engine"
	"h3studio/engine/compute"
	"h3studio/engine/envconfig"
	"h3studio/engine/media"
	"h3studio/engine/plan"
	"h3studio/engine/quant"
	"h3studio/engine/take"
)

func init() {
	register(&command{name: "generate", summary: "generate a video with sound from a prompt (h3.c-compatible flags)", run: runGenerate})
}

// generateArgs is the parsed command line of `h3studio generate`.
type generateArgs struct {
	modelDir  string
	output    string // "" skips the MP4
	wav       string
	framesDir string
	profile   bool
	ssd       bool
	quant     compute.QuantFormat // --quant: the DiT's linear weights quantized
	// deviceMemory and workingSet are --device-memory and --working-set:
	// the memory the automatic mode plans for (0: the device's own).
	deviceMemory, workingSet int64
	backend                  string
	help                     bool
	req                      engine.Request
	remote                   remoteArgs // --server: run the take on a /v1/videos server
	// promptFile is --prompt-file: the prompt read from a file ("-": stdin).
	promptFile string
}

const generateUsage = `usage: h3studio generate -d MODEL_DIR -p PROMPT [-o OUTPUT.mp4] [options]

  -d, --model-dir PATH     MiniMax-H3 snapshot folder (or the demo checkpoint)
  -p, --prompt TEXT        the prompt
      --prompt-file PATH   the prompt read from a file (- for standard input)
  -o, --output PATH        output MP4 (default outputs/h3.mp4; -o '' writes no MP4)
      --width N            output width (default 864; a multiple of 32)
      --height N           output height (default 480; a multiple of 32)
      --render-width N     lower internal width (same aspect, upscaled after decode)
      --render-height N    lower internal height
      --frames N           frames (default 56; rounded up to 17n+5, 22..362)
      --seconds S          duration at 24 fps instead of --frames (rounded up to 17n+5 frames)
      --steps N            denoising passes = model evaluations (default 20; 2..1000)
      --preset NAME        reference, default, fast or preview (fills the controls below)
      --reuse N            velocity reuse: 1 exact, 2 fast, 3 aggressive
      --layers N           DiT blocks: 50 exact, 45 fast, 40 aggressive (released model)
      --core-reuse N       core refresh: 1 exact, 4 fast, 6 aggressive (not with --reuse > 1)
      --token-reduction    pair video tokens in the middle DiT blocks (changes composition)
      --lora PATH[:S[:A]]  apply a LoRA at strength S (default 1; repeatable, in order);
                           A overrides its alpha (default: the file's, else rank; see docs/lora.md)
      --turbo N            Turbo preset for a distilled LoRA: N = 4, 6 or 8 passes, Euler, exact
                           path, shift 12/3 (6/3 at 768p); flags given explicitly still win.
                           Passes as --steps counts them: diffusers' num_inference_steps N+1
      --video-shift S      sigma shift of the video clock (default 12; Turbo 12 or 6)
      --audio-shift S      sigma shift of the audio clock (default 3)
      --seed N             random seed (default 42)
      --first-frame PATH   first-frame conditioning image (FL2VA)
      --last-frame PATH    last-frame conditioning image (FL2VA)
      --ref-image PATH     append an ordered Ref2VA image
      --ref-video PATH     append a video, including its sound track
      --ref-silent-video PATH   append a video without its sound
      --ref-video-audio VIDEO AUDIO   append a video with a separate sound track
      --ref-audio PATH     append a standalone audio clip
      --ref-image-size P   picture references: diffusers (2048-px short edge, the reference),
                           match (the canvas's area, h3.c's default) or max (at most 2048 px)
      --ref-video-canvas P video references: reference (768-class canvas) or h3c (never enlarged)
      --frames-dir PATH    also write frame-00001.png … (folder created if missing)
      --wav PATH           also write the sound as WAV
      --profile            print per-phase timing and storage
      --ssd-streaming      stream DiT blocks from disk (low memory)
      --quant Q            int8 or int4: the DiT's block weights quantized (group 64), or bf16
      --memory MODE        auto (default: the fastest mode that fits), resident, resident-int8,
                           resident-int4, streaming, streaming-int8 or streaming-int4
      --quality FLOOR      the automatic mode's quality floor: best (BF16 only), balanced
                           (default) or fastest (quantized streaming too)
      --device-memory B    choose the automatic mode as if the device had B bytes (GB, GiB)
      --working-set B      ... and this GPU working set (default: the planner's for that memory)
      --backend NAME       auto (Metal when usable, else CPU), metal or cpu
      --server URL         run the take on a /v1/videos server (SGLang Diffusion or
                           h3studio serve) and download its MP4; -d is then optional
                           (given, the take is validated locally first)
      --server-token T     the server's bearer token (default $H3_SERVER_TOKEN)
      --server-map L=R     a local folder the server sees as R (references are sent
                           as file://R/…; repeatable)
      --server-kind K      sglang (default: SGLang's schema only) or h3studio
                           (H3 Studio's controls too; unmapped references uploaded)

References keep their command-line order across the --ref-* flags: that order is the
model's <Picture 1>, <Video 1>, <Audio 1> … numbering.
Exit status: 0 done, 2 invalid request (nothing loaded), 1 failure, 130 cancelled.
`

// parseGenerateArgs parses h3.c-style flags: -x VALUE, --name VALUE,
// --name=VALUE; --ref-video-audio takes two values.
func parseGenerateArgs(args []string) (generateArgs, error) {
	a := generateArgs{output: "outputs/h3.mp4"}
	r := &a.req
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			return a, fmt.Errorf("unexpected argument %q", arg)
		}
		name := strings.TrimLeft(arg, "-")
		value, hasValue := "", false
		if k, v, ok := strings.Cut(name, "="); ok {
			name, value, hasValue = k, v, true
		}
		next := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("%s needs a value", arg)
			}
			i++
			return args[i], nil
		}
		intFlag := func(dst *int) error {
			v, err := next()
			if err != nil {
				return err
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("invalid %s: %q (want a non-negative integer)", name, v)
			}
			*dst = n
			return nil
		}
		// rangedFlag is intFlag for the flags whose zero value the engine
		// reads as "not given" (defaults and presets): an explicit 0 is
		// refused here, naming the rule, as h3.c refuses it.
		rangedFlag := func(dst *int, rule string) error {
			if err := intFlag(dst); err != nil {
				return err
			}
			if *dst == 0 {
				return fmt.Errorf("invalid request: %s 0 %s", name, rule)
			}
			return nil
		}
		strFlag := func(dst *string) error {
			v, err := next()
			*dst = v
			return err
		}
		// withValue passes the flag's value to set, whose error it returns.
		withValue := func(set func(v string) error) error {
			v, err := next()
			if err != nil {
				return err
			}
			return set(v)
		}
		var err error
		switch name {
		case "h", "help":
			a.help = true
		case "d", "model-dir":
			err = strFlag(&a.modelDir)
		case "p", "prompt":
			err = strFlag(&r.Prompt)
		case "prompt-file":
			err = strFlag(&a.promptFile)
		case "o", "output":
			err = strFlag(&a.output)
		case "width":
			err = rangedFlag(&r.Width, "must be a multiple of 32 and at least 32")
		case "height":
			err = rangedFlag(&r.Height, "must be a multiple of 32 and at least 32")
		case "render-width":
			err = intFlag(&r.RenderWidth)
		case "render-height":
			err = intFlag(&r.RenderHeight)
		case "frames":
			err = rangedFlag(&r.Frames, fmt.Sprintf("aligns up to %d frames, outside %d..%d", engine.AlignFrames(0), engine.MinFrames, engine.MaxFrames))
		case "seconds":
			err = withValue(func(v string) (err error) {
				s, perr := strconv.ParseFloat(v, 64)
				if perr != nil || !(s > 0) || s > 1e6 {
					err = fmt.Errorf("invalid seconds: %q", v)
				}
				r.Seconds = s
				return err
			})
		case "steps":
			err = rangedFlag(&r.Steps, fmt.Sprintf("is outside %d..%d", engine.MinSteps, engine.MaxSteps))
		case "preset":
			var v string
			v, err = next()
			r.Preset = engine.Preset(v)
		case "reuse":
			err = rangedFlag(&r.Reuse, fmt.Sprintf("is outside 1..%d", engine.MaxReuse))
		case "layers":
			err = rangedFlag(&r.Layers, fmt.Sprintf("is outside %d..%d", engine.MinLayers, engine.MaxLayers))
		case "core-reuse":
			err = rangedFlag(&r.CoreReuse, fmt.Sprintf("is outside 1..%d", engine.MaxCoreReuse))
		case "token-reduction":
			r.TokenReduction = true
		case "seed":
			err = withValue(func(v string) (err error) {
				s, perr := strconv.ParseUint(v, 10, 64)
				if perr != nil {
					err = fmt.Errorf("invalid seed: %q", v)
				}
				r.Seed, r.SeedSet = s, true
				return err
			})
		case "first-frame":
			err = strFlag(&r.First)
		case "last-frame":
			err = strFlag(&r.Last)
		case "ref-image", "ref-video", "ref-silent-video", "ref-audio":
			err = withValue(func(v string) error {
				kind := map[string]engine.ReferenceKind{"ref-image": engine.RefImage, "ref-video": engine.RefVideo,
					"ref-silent-video": engine.RefSilentVideo, "ref-audio": engine.RefAudio}[name]
				r.References = append(r.References, engine.Reference{Kind: kind, Path: v})
				return nil
			})
		case "ref-video-audio":
			err = withValue(func(v string) (err error) {
				if i+1 >= len(args) {
					err = fmt.Errorf("--ref-video-audio needs VIDEO and AUDIO")
				} else {
					i++
					r.References = append(r.References, engine.Reference{Kind: engine.RefVideoAudio, Path: v, Audio: args[i]})
				}
				return err
			})
		case "ref-image-size":
			err = withValue(func(v string) (err error) {
				r.RefImageSize, err = media.ParseRefImagePolicy(v)
				return err
			})
		case "ref-video-canvas":
			err = withValue(func(v string) (err error) {
				switch v {
				case "reference", "diffusers", "":
					r.RefVideoCanvas = media.RefVideoReference
				case "h3c":
					r.RefVideoCanvas = media.RefVideoH3C
				default:
					err = fmt.Errorf("invalid --ref-video-canvas %q (want reference or h3c)", v)
				}
				return err
			})
		case "frames-dir":
			err = strFlag(&a.framesDir)
		case "wav":
			err = strFlag(&a.wav)
		case "profile":
			a.profile = true
		case "backend":
			err = strFlag(&a.backend)
		case "server":
			err = strFlag(&a.remote.url)
		case "server-token":
			err = strFlag(&a.remote.token)
		case "server-map":
			err = withValue(func(v string) error {
				a.remote.maps = append(a.remote.maps, v)
				return nil
			})
		case "server-kind":
			err = strFlag(&a.remote.kind)
		case "lora":
			err = withValue(func(v string) (err error) {
				var l engine.LoRA
				if l, err = engine.ParseLoRA(v); err == nil {
					r.LoRAs = append(r.LoRAs, l)
				}
				return err
			})
		case "turbo":
			err = rangedFlag(&r.Turbo, "is not a Turbo preset (allowed: 4, 6, 8)")
		case "video-shift", "audio-shift":
			err = withValue(func(v string) (err error) {
				s, perr := strconv.ParseFloat(v, 64)
				if perr != nil || !(s > 0) || s > 100 {
					err = fmt.Errorf("invalid %s: %q (want a number in (0, 100])", name, v)
				}
				if name == "video-shift" {
					r.VideoShift = s
				} else {
					r.AudioShift = s
				}
				return err
			})
		case "ssd-streaming":
			a.ssd = true
			r.Memory = engine.MemoryStreaming
		case "quant":
			err = withValue(func(v string) (err error) {
				a.quant, err = quant.Parse(v)
				return err
			})
		case "memory":
			err = withValue(func(v string) error {
				if v != "auto" {
					r.Memory = engine.MemoryMode(v)
				}
				return nil
			})
		case "quality":
			err = withValue(func(v string) (err error) {
				var f engine.QualityFloor
				f, err = plan.ParseQualityFloor(v)
				r.Quality = f
				return err
			})
		case "device-memory", "working-set":
			err = withValue(func(v string) (err error) {
				n, perr := parseBytes(v)
				err = perr
				if name == "device-memory" {
					a.deviceMemory = n
				} else {
					a.workingSet = n
				}
				return err
			})
		default:
			return a, fmt.Errorf("unknown flag %s", arg)
		}
		if err != nil {
			return a, err
		}
		if r.Frames != 0 && r.Seconds != 0 {
			return a, errors.New("--seconds and --frames are mutually exclusive")
		}
	}
	return a, nil
}

func runGenerate(args []string, stdout, stderr io.Writer) int {
	a, err := parseGenerateArgs(args)
	if a.help {
		fmt.Fprint(stdout, generateUsage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "h3studio generate: %v\n\n%s", err, generateUsage)
		return 2
	}
	if a.modelDir == "" && a.remote.url == "" {
		fmt.Fprintf(stderr, "h3studio generate: -d MODEL_DIR is required\n\n%s", generateUsage)
		return 2
	}
	if err := readPromptFile(&a, os.Stdin); err != nil {
		fmt.Fprintf(stderr, "h3studio generate: %v\n", err)
		return 2
	}
	if err := checkOutputs(a); err != nil {
		fmt.Fprintf(stderr, "h3studio generate: %v\n", err)
		return 2
	}
	if err := checkOutputSafety(a); err != nil {
		fmt.Fprintf(stderr, "h3studio generate: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// After the first Ctrl-C (a clean cancellation) a second one kills
		// the process the usual way.
		<-ctx.Done()
		stop()
	}()
	if a.remote.url != "" {
		return generateRemote(ctx, a, stdout, stderr)
	}
	return generate(ctx, a, stdout, stderr)
}

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
		// Each phase's prediction, for a memory run to set beside the
		// resident set it samples in that phase (tools/fullscale/memory.sh).
		for _, ph := range plan.Prediction.Memory.Phases {
			gib := func(b int64) float64 { return float64(b) / (1 << 30) }
			fmt.Fprintf(stderr, "memory: phase %s predicted %.2f GiB: %s %s %.2f GiB (weights %.2f) + held by other components %.2f GiB\n",
				ph.Name, gib(ph.Peak()), ph.Component, ph.Residency, gib(ph.Storage.Peak), gib(ph.Storage.Weights), gib(ph.Held))
		}
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
