package cpu

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

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

// residentBytes is how much of the n bytes at addr (page-aligned) is in
// memory, from mincore(2): the pages of those addresses alone, whatever the
// rest of the process (the Go heap, the scavenger) does meanwhile. It does
// not read the memory, so it works on a freed, inaccessible region too.
func residentBytes(t testing.TB, addr unsafe.Pointer, n uintptr) int64 {
	t.Helper()
	pages := pageRound(n) / pageSize
	vec := make([]byte, pages)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(addr), pageRound(n), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	var in int64
	for _, v := range vec {
		in += int64(v & 1)
	}
	return in * int64(pageSize)
}

// TestFreeReturnsPagesToOS checks that freeing mapped storage returns its
// pages to the OS at once, over a sequence shaped like a forward's
// activations (allocated, written, freed, larger ones later): each
// tensor's own addresses are resident while it is held and hold nothing
// once Free returns (mincore), and the process's anonymous memory ends near
// where it started. On the Go heap (cpu-go-alloc) the same pages stay until
// the collector and the scavenger get to them.
func TestFreeReturnsPagesToOS(t *testing.T) {
	b := New(Options{})
	defer b.Close()
	base := rssAnon(t)
	var worst int64
	for i, mib := range []int{64, 16, 128, 32, 96, 128} {
		x := compute.MustAlloc(b, compute.U8, mib<<20)
		data := Bytes(x)
		clear(data) // touch every page
		addr, n := unsafe.Pointer(unsafe.SliceData(data)), uintptr(len(data))
		if held := residentBytes(t, addr, n); held < x.Bytes()*9/10 {
			t.Errorf("tensor %d (%d MiB): %d B of its pages resident after writing them all", i, mib, held)
		}
		b.Free(x)
		if kept := residentBytes(t, addr, n); kept != 0 {
			t.Errorf("after freeing tensor %d (%d MiB): %d B of its pages still resident", i, mib, kept)
		}
		worst = max(worst, rssAnon(t)-base)
	}
	// Process-wide, the Go heap's own growth and scavenging move RssAnon
	// too; freed tensors must not add up in it.
	if worst > 8<<20 {
		t.Errorf("anonymous memory rose by up to %d MiB above the start across the frees", worst>>20)
	}
	t.Logf("at most %d KiB of anonymous memory above the start after a Free", worst>>10)
}
