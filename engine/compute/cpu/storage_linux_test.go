package cpu

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"testing"

	"h3studio/engine/compute"
)

// rssAnon is the process's resident anonymous memory (/proc/self/status).
func rssAnon(t testing.TB) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var kb int64
		if n, _ := fmt.Sscanf(sc.Text(), "RssAnon: %d kB", &kb); n == 1 {
			return kb << 10
		}
	}
	t.Fatal("no RssAnon in /proc/self/status")
	return 0
}

// TestFreeReturnsPagesToOS checks that freeing mapped storage lowers the
// process's anonymous memory at once, by what the ledger says was freed,
// over a sequence shaped like a forward's activations (allocated, written,
// freed, larger ones later). On the Go heap (cpu-go-alloc) the same pages
// stay until the collector and the scavenger get to them.
func TestFreeReturnsPagesToOS(t *testing.T) {
	b := New(Options{})
	defer b.Close()
	base := rssAnon(t)
	var worst int64
	for i, mib := range []int{64, 16, 128, 32, 96, 128} {
		x := compute.MustAlloc(b, compute.U8, mib<<20)
		clear(Bytes(x)) // touch every page
		held := rssAnon(t) - base
		if held < x.Bytes()*9/10 {
			t.Errorf("tensor %d (%d MiB): anonymous memory rose by %d B only", i, mib, held)
		}
		b.Free(x)
		left := rssAnon(t) - base
		worst = max(worst, left)
		if left > 8<<20 {
			t.Errorf("after freeing tensor %d (%d MiB): %d B above the start remain", i, mib, left)
		}
	}
	t.Logf("at most %d KiB of anonymous memory above the start after a Free", worst>>10)
}
