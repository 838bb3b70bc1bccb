package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"h3studio/engine/compute"
	"h3studio/engine/snapshot"
)

func init() {
	register(&command{name: "info", summary: "describe a model snapshot: components, sizes, tasks, compute device", run: runInfo})
}

func runInfo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("info", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("d", "", "snapshot `folder` (the MiniMax-H3 download, or a folder holding some of its components)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: h3studio info -d SNAPSHOT [-json]")
		fmt.Fprintln(stderr, "Lists the partitions and components of a snapshot with their parameter counts, sizes and")
		fmt.Fprintln(stderr, "dtypes, the tasks they make available, what is missing, and the compute device. Reads")
		fmt.Fprintln(stderr, "configs and safetensors headers only. Exits 0 when nothing present is corrupt (missing")
		fmt.Fprintln(stderr, "components are reported, not failed), 1 when the folder is not a snapshot or a file is corrupt.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" || fs.NArg() > 0 {
		fs.Usage()
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
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(stderr, "h3studio info: %v\n", err)
			return 1
		}
	} else {
		printReport(stdout, rep, dev)
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

func printReport(w io.Writer, r *snapshot.Report, dev compute.DeviceInfo) {
	title := "MiniMax-H3 snapshot"
	if r.Demo {
		title = "MiniMax-H3 demo model (tiny random weights, not the released model)"
		if r.DemoNote != "" {
			title += ": " + r.DemoNote
		}
	}
	fmt.Fprintf(w, "%s\n  %s (%s)\n", title, r.Root, strings.Join(r.Layouts, " + "))
	for _, p := range r.Partitions {
		line := "  " + p.Name + ":"
		if p.ModelIndex == "" {
			line += " no model_index.json"
		} else {
			line += " " + p.ModelIndex
			if len(p.Tasks) > 0 {
				line += fmt.Sprintf(", tasks %s, sigma shifts video %g audio %g", strings.Join(p.Tasks, ", "), p.VideoShift, p.AudioShift)
			} else if p.Class != "" {
				line += " (" + p.Class + ")"
			}
		}
		fmt.Fprintln(w, line)
	}
	for name, shift := range r.Schedulers {
		fmt.Fprintf(w, "  %s: shift %g\n", name, shift)
	}

	fmt.Fprintln(w, "\nComponents:")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  folder\tcomponent\tfiles\ttensors\tparameters\tsize\tdtypes\tstatus")
	for _, c := range r.Components {
		name := c.Kind.Title()
		if c.Borrowed {
			name += " (copy in text_encoder)"
		}
		status := c.Summary
		if !c.OK() {
			status = "CORRUPT: " + c.Error
		}
		files, tensors, params, size, dtypes := "-", "-", "-", "-", "-"
		if c.Shards > 0 {
			files, tensors = fmt.Sprint(c.Shards), fmt.Sprint(c.Tensors)
			params, size = snapshot.HumanCount(c.Params), snapshot.HumanBytes(c.Bytes)
			var ds []string
			for _, d := range c.DTypes {
				ds = append(ds, fmt.Sprintf("%s×%d", d.DType, d.Tensors))
			}
			dtypes = strings.Join(ds, " ")
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Where, name, files, tensors, params, size, dtypes, status)
	}
	tw.Flush()
	params, bytes := r.Totals()
	fmt.Fprintf(w, "  total: %s parameters, %s of weights\n", snapshot.HumanCount(params), snapshot.HumanBytes(bytes))

	fmt.Fprintln(w, "\nTasks:")
	for _, t := range r.Tasks {
		if t.Available {
			fmt.Fprintf(w, "  %-7s available (%s partition)\n", t.Task, t.Partition)
		} else {
			fmt.Fprintf(w, "  %-7s unavailable (%s partition): %s\n", t.Task, t.Partition, t.Why())
		}
	}
	if len(r.Missing) > 0 {
		fmt.Fprintln(w, "\nMissing components:")
		for _, m := range r.Missing {
			ps := make([]string, len(m.Partitions))
			for i, p := range m.Partitions {
				ps[i] = string(p)
			}
			ts := make([]string, len(m.Disables))
			for i, t := range m.Disables {
				ts[i] = string(t)
			}
			fmt.Fprintf(w, "  %-13s for %s: disables %s\n", m.Kind.Title(), strings.Join(ps, ", "), strings.Join(ts, ", "))
		}
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}

	fmt.Fprintln(w, "\nCompute device:")
	fmt.Fprintf(w, "  %s (%s backend)\n", dev.Name, dev.Backend)
	if dev.MemoryBytes > 0 {
		fmt.Fprintf(w, "  memory %s", gib(dev.MemoryBytes))
		if dev.WorkingSetBytes > 0 {
			fmt.Fprintf(w, ", recommended working set %s", gib(dev.WorkingSetBytes))
		}
		if dev.UnifiedMemory {
			fmt.Fprint(w, ", unified")
		}
		fmt.Fprintln(w)
	}
}

func gib(n int64) string { return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30)) }
