// Command kernelcensus prints the census of H3 Studio's Metal kernels after
// the emulated conformance suite ran (`make test-kernels`): how many entry
// points shaders/*.metal defines (plain `kernel void name(` definitions and
// `[[host_name("…")]]` instantiations of template kernels) and how many of
// them at least one passing emulated test dispatched. Its last line is
//
//	kernels: N, tested: M
//
// It exits 1 when M < N or the census file is missing.
//
// Usage: kernelcensus -tested FILE (written by the suite with H3_KERNEL_CENSUS=FILE)
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"h3studio/shaders"
)

func main() {
	tested := flag.String("tested", "", "census file written by the emulated suite (H3_KERNEL_CENSUS)")
	flag.Parse()
	os.Exit(run(*tested, os.Stdout))
}

func run(path string, w io.Writer) int {
	eps := shaders.EntryPoints()
	counts := map[string]int{}
	readErr := error(nil)
	if path == "" {
		readErr = fmt.Errorf("no -tested file given")
	} else if f, err := os.Open(path); err != nil {
		readErr = err
	} else {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) != 2 {
				continue
			}
			n, err := strconv.Atoi(fields[1])
			if err == nil {
				counts[fields[0]] = n
			}
		}
		f.Close()
	}
	if readErr != nil {
		fmt.Fprintf(w, "kernelcensus: %v: the emulated suite did not record a census\n", readErr)
	}
	m := 0
	perFile := map[string][2]int{}
	for _, e := range eps {
		pf := perFile[e.File]
		pf[0]++
		if counts[e.Name] > 0 {
			m++
			pf[1]++
		} else {
			fmt.Fprintf(w, "untested kernel: %s (shaders/%s:%d)\n", e.Name, e.File, e.Line)
		}
		perFile[e.File] = pf
	}
	for _, f := range shaders.MetalFiles() {
		fmt.Fprintf(w, "  %-18s %3d kernels, %3d tested\n", f, perFile[f][0], perFile[f][1])
	}
	fmt.Fprintf(w, "kernels: %d, tested: %d\n", len(eps), m)
	if readErr != nil || m < len(eps) || len(eps) == 0 {
		return 1
	}
	return 0
}
