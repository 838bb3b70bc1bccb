package main

import (
	"testing"

	"h3studio/engine"
	"h3studio/engine/compute/cpu"
)

// TestGenerateMemoryFlags: --memory, --quality and --device-memory reach
// the request and the backend the session plans on.
func TestGenerateMemoryFlags(t *testing.T) {
	a, err := parseGenerateArgs([]string{"-d", "m", "-p", "x", "--memory", "resident-int4", "--quality", "best", "--device-memory", "16GiB", "--working-set", "10GiB"})
	if err != nil {
		t.Fatal(err)
	}
	if a.req.Memory != engine.MemoryResidentInt4 || a.req.Quality != engine.BestQuality || a.deviceMemory != 16<<30 || a.workingSet != 10<<30 {
		t.Errorf("parsed %q %q %d %d", a.req.Memory, a.req.Quality, a.deviceMemory, a.workingSet)
	}
	d := deviceMemory{Backend: cpu.New(cpu.Options{}), memory: 16 << 30}.Device()
	if d.MemoryBytes != 16<<30 || d.WorkingSetBytes != 0 {
		t.Errorf("device %+v", d)
	}
	for _, bad := range [][]string{{"--quality", "great"}, {"--device-memory", "-1"}} {
		if _, err := parseGenerateArgs(append([]string{"-d", "m", "-p", "x"}, bad...)); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
