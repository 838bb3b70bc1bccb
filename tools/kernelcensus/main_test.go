package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"h3studio/shaders"
)

func TestCensusLine(t *testing.T) {
	eps := shaders.EntryPoints()
	dir := t.TempDir()
	full := filepath.Join(dir, "full")
	var lines []string
	for _, e := range eps {
		lines = append(lines, e.Name+" 3")
	}
	os.WriteFile(full, []byte(strings.Join(lines, "\n")), 0o644)
	var b strings.Builder
	if st := run(full, &b); st != 0 {
		t.Fatalf("complete census: status %d\n%s", st, b.String())
	}
	last := lastLine(b.String())
	if want := "kernels: " + strconv.Itoa(len(eps)) + ", tested: " + strconv.Itoa(len(eps)); last != want {
		t.Fatalf("last line %q, want %q", last, want)
	}

	partial := filepath.Join(dir, "partial")
	os.WriteFile(partial, []byte(strings.Join(lines[1:], "\n")+"\n"+eps[0].Name+" 0\n"), 0o644)
	b.Reset()
	if st := run(partial, &b); st == 0 || !strings.Contains(b.String(), "untested kernel: "+eps[0].Name) {
		t.Fatalf("partial census passed:\n%s", b.String())
	}
	b.Reset()
	if st := run(filepath.Join(dir, "missing"), &b); st == 0 || !strings.HasSuffix(lastLine(b.String()), "tested: 0") {
		t.Fatalf("missing census file passed:\n%s", b.String())
	}
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}
