//go:build linux

package videovae

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
)

// TestStreamedDecodeDropsBlockPages: after a streamed decode the process
// holds less of the weights file than after a resident decode of the same
// latents by the decoder blocks' bytes (each block's pages are dropped after
// its stage), as the process's own accounting shows (/proc/self/smaps, the
// resident size of the file's mapping). The blocks are bound as views of the
// mapping (float32 as stored), as the released BF16 checkpoint's are, so
// nothing but the release drops their pages.
func TestStreamedDecodeDropsBlockPages(t *testing.T) {
	z := randomVolume(24, 8, 4, 4, 5)
	blockBytes := func(m *Model) (n, tensors int64, file string) {
		for _, name := range m.ck.Names() {
			if strings.HasPrefix(name, "decoder.transformer_blocks.") {
				info, _ := m.ck.Info(name)
				n += info.Bytes()
				tensors++
				f, _ := m.ck.FileOf(name)
				file = f.Path
			}
		}
		return n, tensors, file
	}
	rss := map[compute.Residency]int64{}
	var blocks, tensors int64
	for _, r := range []compute.Residency{compute.Resident, compute.Streaming} {
		m := tinyModelWith(t, cpu.New(cpu.Options{}), &Options{DecoderOnly: true, Residency: r, WeightDType: compute.F32})
		if _, err := m.Decode(context.Background(), z, smallTiles); err != nil {
			t.Fatal(err)
		}
		var file string
		blocks, tensors, file = blockBytes(m)
		rss[r] = mappingRSS(t, file)
		m.Close()
	}
	// Each block tensor may share its first and last page with a neighbour
	// that stays: those pages are not the release's to drop.
	slack := 2 * tensors * int64(os.Getpagesize())
	t.Logf("blocks %d bytes in %d tensors; weights file resident after a resident decode %d, after a streamed decode %d",
		blocks, tensors, rss[compute.Resident], rss[compute.Streaming])
	if drop := rss[compute.Resident] - rss[compute.Streaming]; drop < blocks-slack {
		t.Errorf("a streamed decode holds %d bytes less of the weights file than a resident one; the blocks are %d (less %d of shared pages)", drop, blocks, slack)
	}
}

// mappingRSS is the resident size of this process's mappings of file.
func mappingRSS(t *testing.T, file string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	var rss int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = len(fields) >= 6 && fields[5] == file
			continue
		}
		if in && len(fields) == 3 && fields[0] == "Rss:" {
			kb, _ := strconv.ParseInt(fields[1], 10, 64)
			rss += kb << 10
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rss
}
