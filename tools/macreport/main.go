// Command macreport runs, on a Mac, what this project cannot run on Linux and
// writes one Markdown report for the README's status table: the device and
// OS, then each step's result, duration, peak memory and the tail of its
// log — the app build (signed ad hoc), `make check-mac`, `make parity` (the
// conformance suite on the GPU, the engine tests on Metal, the AVFoundation
// round trips of darwin/).
//
// Usage (make mac-report):
//
//	go run ./tools/macreport [-o build/mac-report.md] [-steps app,check-mac,parity]
//
// Not yet in the report: a timed warm forward of a full-size random-weight
// DiT at 512²×22, resident and streaming, against the chip's bound from
// ../shared/research/apple-silicon.md — the tree has no full-scale
// random-weight DiT benchmark to time; the report says so in its table.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// step is one command of the report.
type step struct {
	Name, Cmd string
}

var steps = map[string]step{
	"app":       {"app (build, ad-hoc signature)", "make app"},
	"check-mac": {"make check-mac", "make check-mac"},
	"parity":    {"make parity (GPU conformance, engine on Metal, AVFoundation round trips)", "make parity"},
}

// result is what a step did.
type result struct {
	step
	OK       bool
	Exit     int
	Elapsed  time.Duration
	PeakRSS  int64 // bytes, from /usr/bin/time -l; 0 when unknown
	LogTail  string
	Failures []string // `--- FAIL:` lines
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("macreport", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "build/mac-report.md", "the report `file`")
	which := fs.String("steps", "app,check-mac,parity", "comma-separated `steps`")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if runtime.GOOS != "darwin" {
		fmt.Fprintln(stderr, "macreport: needs macOS on Apple Silicon (it runs make parity on the GPU)")
		return 2
	}
	var rs []result
	for _, name := range strings.Split(*which, ",") {
		s, ok := steps[strings.TrimSpace(name)]
		if !ok {
			fmt.Fprintf(stderr, "macreport: unknown step %q\n", name)
			return 2
		}
		fmt.Fprintf(stdout, "macreport: %s …\n", s.Cmd)
		rs = append(rs, runStep(s))
	}
	report := render(facts(), rs)
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		fmt.Fprintln(stderr, "macreport:", err)
		return 1
	}
	if err := os.WriteFile(*out, []byte(report), 0o644); err != nil {
		fmt.Fprintln(stderr, "macreport:", err)
		return 1
	}
	fmt.Fprintf(stdout, "macreport: wrote %s\n", *out)
	for _, r := range rs {
		if !r.OK {
			return 1
		}
	}
	return 0
}

var rssRe = regexp.MustCompile(`(\d+)\s+maximum resident set size`)

// runStep runs a step under /usr/bin/time -l (peak memory).
func runStep(s step) result {
	start := time.Now()
	cmd := exec.Command("/usr/bin/time", append([]string{"-l"}, strings.Fields(s.Cmd)...)...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	r := result{step: s, OK: err == nil, Elapsed: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Exit = ee.ExitCode()
	} else if err != nil {
		r.Exit = -1
	}
	log := buf.String()
	if m := rssRe.FindStringSubmatch(log); m != nil {
		r.PeakRSS, _ = strconv.ParseInt(m[1], 10, 64)
	}
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "--- FAIL:") {
			r.Failures = append(r.Failures, strings.TrimSpace(l))
		}
	}
	r.LogTail = tail(log, 40)
	return r
}

func tail(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

// facts describes the machine: model, chip, memory, macOS, and what
// h3studio backend reports.
func facts() [][2]string {
	q := func(name string, args ...string) string {
		b, err := exec.Command(name, args...).Output()
		if err != nil {
			return "unknown (" + err.Error() + ")"
		}
		return strings.TrimSpace(string(b))
	}
	backend := q("./build/h3studio", "backend")
	return [][2]string{
		{"model", q("sysctl", "-n", "hw.model")},
		{"chip", q("sysctl", "-n", "machdep.cpu.brand_string")},
		{"memory", q("sysctl", "-n", "hw.memsize") + " bytes"},
		{"macOS", q("sw_vers", "-productVersion") + " (" + q("sw_vers", "-buildVersion") + ")"},
		{"h3studio backend", strings.ReplaceAll(backend, "\n", "; ")},
		{"commit", q("git", "rev-parse", "--short", "HEAD")},
	}
}

func render(fs [][2]string, rs []result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# H3 Studio on a Mac — %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	b.WriteString("| fact | value |\n|---|---|\n")
	for _, f := range fs {
		fmt.Fprintf(&b, "| %s | %s |\n", f[0], strings.ReplaceAll(f[1], "|", "\\|"))
	}
	b.WriteString("\n| step | result | time | peak memory |\n|---|---|---|---|\n")
	for _, r := range rs {
		st := "passed"
		if !r.OK {
			st = fmt.Sprintf("**failed** (exit %d, %d failing tests)", r.Exit, len(r.Failures))
		}
		mem := "—"
		if r.PeakRSS > 0 {
			mem = fmt.Sprintf("%.2f GiB", float64(r.PeakRSS)/(1<<30))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.Name, st, r.Elapsed.Round(time.Second), mem)
	}
	b.WriteString("| timed warm DiT forward at 512²×22 (resident, streaming) | not run: the tree has no full-scale random-weight DiT benchmark yet | — | — |\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "\n## %s\n\n", r.Name)
		for _, f := range r.Failures {
			fmt.Fprintf(&b, "* `%s`\n", f)
		}
		fmt.Fprintf(&b, "\n```\n%s\n```\n", r.LogTail)
	}
	return b.String()
}
