package main

import (
	"fmt"
	"io"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
	"h3studio/engine/envconfig"
)

// openBackend returns the compute backend for choice: "metal", "cpu", or
// "auto" (or ""), which takes Metal when the Mac has a usable GPU and
// otherwise says why on notice and uses the CPU. The CPU backend takes the
// oracles H3_ORACLE selects (its cpu-* paths).
func openBackend(choice string, notice io.Writer) (compute.Backend, error) {
	oracles, err := envconfig.Oracles()
	if err != nil {
		return nil, err
	}
	switch choice {
	case "cpu":
		return cpu.New(cpu.Options{Oracles: oracles}), nil
	case "metal":
		return openMetal()
	case "", "auto":
		b, err := openMetal()
		if err == nil {
			return b, nil
		}
		fmt.Fprintf(notice, "h3studio: not using the GPU: %v; computing on the CPU instead (much slower)\n", err)
		return cpu.New(cpu.Options{Oracles: oracles}), nil
	}
	return nil, fmt.Errorf("unknown backend %q (want auto, metal or cpu)", choice)
}
