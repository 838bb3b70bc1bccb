package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"h3studio/app/fixture"
	"h3studio/engine/quant"
	"h3studio/engine/testmodel"
	"h3studio/engine/testmodel/released"
)

func init() {
	register(&command{name: "fixture", summary: "run an oracle fixture file against a snapshot", run: runFixture})
	register(&command{name: "testmodel", summary: "write a random-weight checkpoint: the demo model, or the released size", run: runTestModel})
}

func runFixture(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("fixture", stderr,
		"usage: h3studio fixture -d SNAPSHOT -i FIXTURE -o OUT [--quant int8|int4]",
		"Computes every result of an oracle fixture family from its inputs and the snapshot,",
		"writes them under the reference names, lists anything not computed on stderr and",
		"then exits 1. With --quant a dit_* family runs its forward with the blocks' linear",
		"weights quantized (the cache beside the transformer, built on first use as generate",
		"builds it) and computes only its bf16.* results.",
	)
	dir := fs.String("d", "", "snapshot `folder` (or a folder holding just the components the family needs)")
	in := fs.String("i", "", "fixture `file` (.safetensors with h3_fixture metadata)")
	out := fs.String("o", "", "output `file` for the computed tensors")
	backend := fs.String("backend", "cpu", "compute `backend`: cpu (the reference), metal or auto")
	quantName := fs.String("quant", "", "dit_* families: quantize the blocks' linear weights to `format` int8 or int4 (group 64)")
	if !parseFlags(fs, args, func() bool { return *dir != "" && *in != "" && *out != "" && fs.NArg() == 0 }) {
		return 2
	}
	q, err := quant.Parse(*quantName)
	if err != nil {
		fmt.Fprintf(stderr, "h3studio fixture: --quant: %v\n", err)
		return 2
	}
	b, err := openBackend(*backend, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "h3studio fixture: %v\n", err)
		return 2
	}
	defer b.Close()
	res, err := fixture.ExecuteWith(*dir, *in, *out, b, fixture.Options{Quant: q})
	if res != nil {
		if res.Saved {
			fmt.Fprintf(stdout, "%s: wrote %d tensors to %s\n", res.Family, len(res.Written), *out)
		}
		names := make([]string, 0, len(res.Missing))
		for n := range res.Missing {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(stderr, "missing %s: %s\n", n, res.Missing[n])
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "h3studio fixture: %v\n", err)
		return 1
	}
	return 0
}

func runTestModel(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("testmodel", stderr,
		"usage: h3studio testmodel -o DIR [--force] [--size demo|released] [--layout original]",
		"                          [--components dit,text-encoder,vision,video-vae,audio-vae] [--partitions fl2va,ref2va]",
		"                          [--blocks N] [--text-layers N] [--seed S] [--print-bytes]",
		"Writes a complete MiniMax-H3 snapshot in the released layout (FL2VA/ and Ref2VA/) with deterministic",
		"random weights: --size demo is H3 Studio's demo checkpoint (tiny widths, for trying the app);",
		"--size released has the released configs and tensor inventory (docs/fullscale.md), streamed to disk.",
	)
	out := fs.String("o", "", "output `folder` (must not exist, or be empty)")
	force := fs.Bool("force", false, "replace an existing folder")
	size := fs.String("size", "demo", "`demo` (tiny widths, seconds) or released (the released widths: tens of GB)")
	layout := fs.String("layout", "original", "released size: the `layout` (original: FL2VA/ and Ref2VA/)")
	comps := fs.String("components", "", "released size: comma-separated `list` of "+strings.Join(released.AllComponents, ",")+" (default all)")
	parts := fs.String("partitions", "", "released size: comma-separated `list` of fl2va,ref2va (default both; the first holds the shared components)")
	printBytes := fs.Bool("print-bytes", false, "released size: print the bytes the tensors would take and write nothing (no -o needed)")
	blocks := fs.Int("blocks", 0, "released size: DiT `depth` (0: the released 50), full width")
	textLayers := fs.Int("text-layers", 0, "released size: text-encoder `depth` (0: the released 64), full width")
	seed := fs.Uint64("seed", 0, "released size: weight `seed`; the same seed writes the same bytes")
	workers := fs.Int("j", 0, "released size: `goroutines` drawing each tensor (0: all cores)")
	if !parseFlags(fs, args, func() bool { return (*out != "" || *printBytes) && fs.NArg() == 0 }) {
		return 2
	}
	if *printBytes && *size != "released" {
		fmt.Fprintln(stderr, "h3studio testmodel: --print-bytes needs --size released")
		return 2
	}
	var write func(dir string) error
	switch *size {
	case "demo":
		write = testmodel.Write
	case "released":
		if *layout != "original" {
			fmt.Fprintf(stderr, "h3studio testmodel: --layout %s: the released-size writer writes the original layout only (--layout original)\n", *layout)
			return 2
		}
		o := released.Options{Blocks: *blocks, TextLayers: *textLayers, Seed: *seed, Workers: *workers,
			Progress: func(p string) { fmt.Fprintf(stdout, "writing %s\n", p) }}
		if *comps != "" {
			o.Components = strings.Split(*comps, ",")
		}
		if *parts != "" {
			o.Partitions = strings.Split(*parts, ",")
		}
		if err := released.Check(o); err != nil {
			fmt.Fprintf(stderr, "h3studio testmodel: %v\n", err)
			return 2
		}
		if *printBytes {
			n, err := released.Bytes(o)
			if err != nil {
				fmt.Fprintf(stderr, "h3studio testmodel: %v\n", err)
				return 1
			}
			fmt.Fprintln(stdout, n)
			return 0
		}
		write = func(dir string) error {
			return writeFolder(dir, func(tmp string) error { return released.Write(tmp, o) })
		}
	default:
		fmt.Fprintf(stderr, "h3studio testmodel: --size %q: want demo or released\n", *size)
		return 2
	}
	if st, err := os.Stat(*out); err == nil {
		entries, _ := os.ReadDir(*out)
		switch {
		case !st.IsDir():
			fmt.Fprintf(stderr, "h3studio testmodel: %s exists and is not a folder\n", *out)
			return 1
		case len(entries) > 0 && !*force:
			fmt.Fprintf(stderr, "h3studio testmodel: %s is not empty (use --force to replace it)\n", *out)
			return 1
		}
		// Move the old folder aside; it is removed once the new one is in place.
		old := fmt.Sprintf("%s.old-%d", *out, os.Getpid())
		if err := os.Rename(*out, old); err != nil {
			fmt.Fprintf(stderr, "h3studio testmodel: %v\n", err)
			return 1
		}
		defer os.RemoveAll(old)
		start := time.Now()
		if err := write(*out); err != nil {
			os.Rename(old, *out)
			fmt.Fprintf(stderr, "h3studio testmodel: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote the %s checkpoint to %s in %.1f s\n", *size, *out, time.Since(start).Seconds())
		return 0
	}
	start := time.Now()
	if err := write(*out); err != nil {
		fmt.Fprintf(stderr, "h3studio testmodel: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote the %s checkpoint to %s in %.1f s\n", *size, *out, time.Since(start).Seconds())
	return 0
}

// writeFolder runs write into a temporary folder beside dir and renames it
// into place, so a reader never sees a partial checkpoint; on failure
// nothing is left.
func writeFolder(dir string, write func(tmp string) error) error {
	dir = filepath.Clean(dir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-*")
	if err != nil {
		return err
	}
	// One err throughout: a write error must stop the rename below.
	if err = os.Chmod(tmp, 0o755); err == nil {
		err = write(tmp)
	}
	if err == nil {
		err = os.Rename(tmp, dir)
	}
	if err != nil {
		os.RemoveAll(tmp)
	}
	return err
}
