package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"h3studio/engine"
	"h3studio/engine/lora"
)

func init() {
	register(&command{name: "lora", summary: "inspect a LoRA file: format, targets, ranks, alpha, size (lora inspect PATH)", run: runLoRA})
}

const loraUsage = `usage: h3studio lora inspect PATH

Prints the file's key format(s), the modules it targets, their ranks, the
alpha each would use (and where it comes from), its size and sha256, and
every tensor that names no MiniMax-H3 module.
`

func runLoRA(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(stdout, loraUsage)
		return 0
	}
	if len(args) != 2 || args[0] != "inspect" {
		fmt.Fprint(stderr, loraUsage)
		return 2
	}
	f, err := lora.Read(args[1])
	if err != nil {
		fmt.Fprintf(stderr, "h3studio lora: %v\n", err)
		return 1
	}
	fmt.Fprint(stdout, lora.Describe(f))
	return 0
}

// printLoRAs reports what each LoRA of a take applied, and its warnings.
func printLoRAs(w io.Writer, applied []engine.AppliedLoRA) {
	for _, a := range applied {
		alpha := "per module"
		if a.Alpha > 0 {
			alpha = fmt.Sprintf("%g", a.Alpha)
		}
		fmt.Fprintf(w, "lora: %s at strength %g: %s, %d modules, rank %s, alpha %s (%s), sha256 %s\n",
			filepath.Base(a.Path), a.Strength, a.Format, a.Modules, ints(a.Ranks), alpha, a.AlphaSource, a.SHA256[:12])
		for _, m := range a.Warnings() {
			fmt.Fprintf(w, "warning: %s\n", m)
		}
	}
}

func ints(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, "/")
}
