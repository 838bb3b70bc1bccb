//go:build !unix

package snapshottest

import "time"

// DiskUsage cannot be measured here; it returns -1.
func DiskUsage(root string) int64 { return -1 }

// CPUTime is unknown here; it returns -1.
func CPUTime() time.Duration { return -1 }
