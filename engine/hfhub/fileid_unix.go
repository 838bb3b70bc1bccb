//go:build unix

package hfhub

import (
	"io/fs"
	"syscall"
)

// fileID identifies a file by device and inode, so hard links and shared blobs hash once.
func fileID(st fs.FileInfo) [2]uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return [2]uint64{uint64(s.Dev), uint64(s.Ino)}
	}
	return [2]uint64{}
}
