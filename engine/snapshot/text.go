package snapshot

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// The report as people read it: `h3studio info` prints it and the studio's
// model-folder dialog shows it (both add the compute device), so the two
// never disagree.

// DefaultDemoName names a demo checkpoint whose marker has no name.
const DefaultDemoName = "MiniMax-H3 demo model (tiny random weights)"

// Name is how the app names the snapshot: the demo checkpoint's own name,
// else the partitions whose tasks are all available ("MiniMax-H3 FL2VA +
// Ref2VA"), else "MiniMax-H3 snapshot (incomplete)".
func (r *Report) Name() string {
	if r.Demo {
		if r.DemoName != "" {
			return r.DemoName
		}
		return DefaultDemoName
	}
	var parts []string
	for _, p := range []Partition{FL2VA, Ref2VA} {
		all, any := true, false
		for _, t := range r.Tasks {
			if t.Partition == p {
				any = true
				all = all && t.Available
			}
		}
		if any && all {
			parts = append(parts, string(p))
		}
	}
	if len(parts) == 0 {
		return "MiniMax-H3 snapshot (incomplete)"
	}
	return "MiniMax-H3 " + strings.Join(parts, " + ")
}

// AvailableTasks lists the tasks that can run, in Tasks order.
func (r *Report) AvailableTasks() []Task {
	var out []Task
	for _, t := range r.Tasks {
		if t.Available {
			out = append(out, t.Task)
		}
	}
	return out
}

// Unusable says in plain words why no task can run ("" when one can): the
// text-only task's reason, which names the missing or corrupt components.
func (r *Report) Unusable() string {
	if len(r.AvailableTasks()) > 0 {
		return ""
	}
	for _, t := range r.Tasks {
		if t.Task == T2VA {
			return fmt.Sprintf("the %s partition has no usable model: %s", t.Partition, t.Why())
		}
	}
	return "no task can run"
}

// Text is the report as WriteText writes it.
func (r *Report) Text() string {
	var b strings.Builder
	r.WriteText(&b)
	return b.String()
}

// WriteText writes the report for people: the snapshot (named, with its
// layouts and partitions), a table of the components (files, tensors,
// parameters, size, dtypes, status), the totals, every task with why it is
// unavailable, the missing components with the tasks they disable, the
// corrupt files with the rule each breaks, and warnings.
func (r *Report) WriteText(w io.Writer) {
	title := "MiniMax-H3 snapshot"
	if r.Demo {
		title = r.Name() + " — not the released model"
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
	for _, name := range slices.Sorted(maps.Keys(r.Schedulers)) {
		fmt.Fprintf(w, "  %s: shift %g\n", name, r.Schedulers[name])
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
			params, size = HumanCount(c.Params), HumanBytes(c.Bytes)
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
	fmt.Fprintf(w, "  total: %s parameters, %s of weights\n", HumanCount(params), HumanBytes(bytes))

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
	if len(r.Problems) > 0 {
		fmt.Fprintln(w, "\nCorrupt files:")
		for _, p := range r.Problems {
			fmt.Fprintf(w, "  %s\n", p.Error)
		}
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}
