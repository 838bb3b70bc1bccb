package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"h3studio/engine/testmodel"
)

func init() {
	register(&command{name: "testmodel", summary: "write the demo checkpoint (tiny random weights, released layout)", run: runTestModel})
}

func runTestModel(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("testmodel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "output `folder` (must not exist, or be empty)")
	force := fs.Bool("force", false, "replace an existing folder")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: h3studio testmodel -o DIR [--force]")
		fmt.Fprintln(stderr, "Writes H3 Studio's demo checkpoint: a complete MiniMax-H3 snapshot in the released layout")
		fmt.Fprintln(stderr, "(FL2VA/ and Ref2VA/) with tiny deterministic random weights, for trying the app and the")
		fmt.Fprintln(stderr, "command line without the real model. It is written to a temporary folder and renamed.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *out == "" || fs.NArg() > 0 {
		fs.Usage()
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
		if err := testmodel.Write(*out); err != nil {
			os.Rename(old, *out)
			fmt.Fprintf(stderr, "h3studio testmodel: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote the demo checkpoint to %s in %.1f s\n", *out, time.Since(start).Seconds())
		return 0
	}
	start := time.Now()
	if err := testmodel.Write(*out); err != nil {
		fmt.Fprintf(stderr, "h3studio testmodel: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote the demo checkpoint to %s in %.1f s\n", *out, time.Since(start).Seconds())
	return 0
}
