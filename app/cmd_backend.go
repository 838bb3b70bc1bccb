package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"h3studio/engine/compute"
)

func init() {
	register(&command{name: "backend", summary: "show the compute device H3 Studio would use", run: runBackend})
}

func runBackend(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("backend", stderr)
	choice := fs.String("b", "auto", "backend: `auto` (Metal when usable, else CPU), metal or cpu")
	asJSON := fs.Bool("json", false, "print the device facts as JSON")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return 2
	}
	var notes strings.Builder
	b, err := openBackend(*choice, &notes)
	if err != nil {
		fmt.Fprintf(stderr, "h3studio backend: %v\n", err)
		return 1
	}
	defer b.Close()
	info := b.Device()
	if *asJSON {
		out := struct {
			compute.DeviceInfo
			Note string `json:",omitempty"`
		}{info, strings.TrimSpace(notes.String())}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return 1
		}
		return 0
	}
	fmt.Fprint(stdout, notes.String())
	fmt.Fprintf(stdout, "backend:     %s\ndevice:      %s\n", info.Backend, info.Name)
	if info.Family != "" {
		fmt.Fprintf(stdout, "GPU family:  %s\n", info.Family)
	}
	fmt.Fprintf(stdout, "memory:      %.1f GB", float64(info.MemoryBytes)/1e9)
	if info.UnifiedMemory {
		fmt.Fprint(stdout, " (unified)")
	}
	fmt.Fprintln(stdout)
	if info.WorkingSetBytes > 0 {
		fmt.Fprintf(stdout, "working set: %.1f GB recommended for the GPU\n", float64(info.WorkingSetBytes)/1e9)
	}
	if info.Threads > 0 {
		fmt.Fprintf(stdout, "threads:     %d\n", info.Threads)
	}
	return 0
}
