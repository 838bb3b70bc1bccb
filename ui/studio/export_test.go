package studio

import "io"

// SetCreateFile replaces the file creator used for every library write (to
// simulate a full disk) and returns a function restoring it.
func SetCreateFile(f func(path string) (io.WriteCloser, error)) (restore func()) {
	old := createFile
	createFile = f
	return func() { createFile = old }
}
