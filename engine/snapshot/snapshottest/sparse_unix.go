//go:build unix

package snapshottest

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"time"
)

// DiskUsage is the space the files under root occupy on disk (allocated
// blocks, not apparent sizes), or -1 when the platform cannot tell.
func DiskUsage(root string) int64 {
	var n int64
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			n += int64(st.Blocks) * 512
		}
		return nil
	})
	return n
}

// CPUTime is the process's user+system CPU time so far (all threads), for
// benchmarks that must be read on a shared, loaded machine.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
