// Command h3studio is H3 Studio: with no subcommand it opens the studio
// window; with a subcommand it is a command-line tool (run `h3studio help`).
//
// This package is the composition root: the only code that knows every
// concrete type. Subcommands live in cmd_*.go, one per file or a few of one
// topic together (info and backend describe the snapshot and the device;
// fixture and testmodel serve the oracle checks), and register themselves
// in init.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"h3studio/app/clocale" // before Fyne's init: see its doc
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	// run executes the command with its arguments and returns the exit
	// status. stdout and stderr are passed for testability.
	run func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("h3studio: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// newFlagSet is a subcommand's flag set: it reports flag errors on stderr
// and, when usage lines are given, its usage (-h, or a caller's fs.Usage())
// prints them and then the flags' defaults there.
func newFlagSet(name string, stderr io.Writer, usage ...string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	if len(usage) > 0 {
		fs.Usage = func() {
			for _, l := range usage {
				fmt.Fprintln(stderr, l)
			}
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseFlags parses args into fs and reports whether the command may go
// on. It returns false, for the caller to exit with status 2, on a flag
// error (which fs has already reported) or when valid, asked after parsing
// whether the arguments make sense, says no; then it prints fs's usage.
// A nil valid accepts anything that parses.
func parseFlags(fs *flag.FlagSet, args []string, valid func() bool) bool {
	if err := fs.Parse(args); err != nil {
		return false
	}
	if valid != nil && !valid() {
		fs.Usage()
		return false
	}
	return true
}

// printJSON writes v to w as the commands' -json output: indented JSON
// and a newline.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func main() {
	clocale.Restore()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	// No subcommand, or only flags (macOS passes -psn_… to apps started by
	// the Finder): open the studio.
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return runGUI(args, stdout, stderr)
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" {
		usage(stdout)
		return 0
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "h3studio: unknown command %q\n\n", name)
		usage(stderr)
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: h3studio [command] [flags]")
	fmt.Fprintln(w, "\nWith no command, H3 Studio opens its window. Commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun `h3studio COMMAND -h` for a command's flags.")
}
