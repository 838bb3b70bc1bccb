package uitest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestQueueRunsWhatItsWorkQueues: Drain runs queued functions in order,
// including those they queue, and counts them.
func TestQueueRunsWhatItsWorkQueues(t *testing.T) {
	var q Queue
	var got []int
	q.Go(func() { got = append(got, 1); q.Go(func() { got = append(got, 3) }) })
	q.Go(func() { got = append(got, 2) })
	if n := q.Drain(); n != 3 || len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Fatalf("Drain ran %d: %v", n, got)
	}
	if n := q.Drain(); n != 0 {
		t.Fatalf("an empty queue ran %d", n)
	}
}

// TestFilesKeysBySlashPath: Files reads nested files under their
// slash-separated relative paths and lists no folders.
func TestFilesKeysBySlashPath(t *testing.T) {
	dir := t.TempDir()
	WriteFile(t, dir, "a.txt", []byte("a"))
	if err := os.MkdirAll(filepath.Join(dir, "sub", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	WriteFile(t, filepath.Join(dir, "sub", "deeper"), "b.bin", []byte{1, 2})
	got := Files(t, dir)
	if len(got) != 2 || string(got["a.txt"]) != "a" || len(got["sub/deeper/b.bin"]) != 2 {
		t.Fatalf("files %v", got)
	}
}
