package main

import (
	"fmt"
	"io"
	"strings"

	"h3studio/engine/compute"
	"h3studio/engine/snapshot"
)

func init() {
	register(&command{name: "info", summary: "describe a model snapshot: components, sizes, tasks, compute device", run: runInfo})
	register(&command{name: "backend", summary: "show the compute device H3 Studio would use", run: runBackend})
}

func runInfo(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("info", stderr,
		"usage: h3studio info -d SNAPSHOT [-json]",
		"Lists the partitions and components of a snapshot with their parameter counts, sizes and",
		"dtypes, the tasks they make available, what is missing, and the compute device. Reads",
		"configs and safetensors headers only. Exits 0 when nothing present is corrupt (missing",
		"components are reported, not failed), 1 when the folder is not a snapshot or a file is corrupt.",
	)
	dir := fs.String("d", "", "snapshot `folder` (the MiniMax-H3 download, or a folder holding some of its components)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if !parseFlags(fs, args, func() bool { return *dir != "" && fs.NArg() == 0 }) {
		return 2
	}
	rep, err := snapshot.Inspect(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "h3studio info: %v\n", err)
		return 1
	}
	dev := deviceInfo()
	if *asJSON {
		out := struct {
			*snapshot.Report
			Device compute.DeviceInfo `json:"device"`
		}{rep, dev}
		if err := printJSON(stdout, out); err != nil {
			fmt.Fprintf(stderr, "h3studio info: %v\n", err)
			return 1
		}
	} else {
		fmt.Fprint(stdout, infoText(rep, dev))
	}
	if !rep.OK() {
		for _, p := range rep.Problems {
			fmt.Fprintf(stderr, "corrupt: %s\n", p.Error)
		}
		fmt.Fprintf(stderr, "h3studio info: %s: %d corrupt file(s); see above\n", *dir, len(rep.Problems))
		return 1
	}
	return 0
}

// infoText is the report `h3studio info` prints and the studio's model
// dialog shows: the snapshot's report (snapshot.Report.WriteText) and the
// compute device.
func infoText(r *snapshot.Report, dev compute.DeviceInfo) string {
	var b strings.Builder
	r.WriteText(&b)
	fmt.Fprintln(&b, "\nCompute device:")
	fmt.Fprintf(&b, "  %s (%s backend)\n", dev.Name, dev.Backend)
	if dev.MemoryBytes > 0 {
		fmt.Fprintf(&b, "  memory %s", gib(dev.MemoryBytes))
		if dev.WorkingSetBytes > 0 {
			fmt.Fprintf(&b, ", recommended working set %s", gib(dev.WorkingSetBytes))
		}
		if dev.UnifiedMemory {
			fmt.Fprint(&b, ", unified")
		}
		fmt.Fprintln(&b)
	}
	return b.String()
}

func gib(n int64) string { return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30)) }

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
		if err := printJSON(stdout, out); err != nil {
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
