package main

import (
	"fmt"
	"io"
	"sort"

	"h3studio/app/fixture"
)

func init() {
	register(&command{name: "fixture", summary: "run an oracle fixture file against a snapshot", run: runFixture})
}

func runFixture(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("fixture", stderr,
		"usage: h3studio fixture -d SNAPSHOT -i FIXTURE -o OUT",
		"Computes every result of an oracle fixture family from its inputs and the snapshot,",
		"writes them under the reference names, lists anything not computed on stderr and",
		"then exits 1.",
	)
	dir := fs.String("d", "", "snapshot `folder` (or a folder holding just the components the family needs)")
	in := fs.String("i", "", "fixture `file` (.safetensors with h3_fixture metadata)")
	out := fs.String("o", "", "output `file` for the computed tensors")
	backend := fs.String("backend", "cpu", "compute `backend`: cpu (the reference), metal or auto")
	if !parseFlags(fs, args, func() bool { return *dir != "" && *in != "" && *out != "" && fs.NArg() == 0 }) {
		return 2
	}
	b, err := openBackend(*backend, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "h3studio fixture: %v\n", err)
		return 2
	}
	defer b.Close()
	res, err := fixture.Execute(*dir, *in, *out, b)
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
