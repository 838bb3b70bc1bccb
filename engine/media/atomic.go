package media

import (
	"os"
	"path/filepath"

	"h3studio/engine/atomicfile"
)

// atomicFile is a destination written under a temporary name in the same
// folder and renamed over the final name only by commit; abort (or a failed
// commit) leaves nothing behind.
type atomicFile struct {
	path, tmp string
	f         *os.File
}

func createAtomic(path string) (*atomicFile, error) {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil {
		return nil, fileErr(path, err, "destination folder does not exist")
	} else if !st.IsDir() {
		return nil, fileErr(path, nil, "destination folder %s is not a folder", dir)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fileErr(path, nil, "destination is a folder")
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.part")
	if err != nil {
		return nil, fileErr(path, err, "cannot write to the destination folder")
	}
	return &atomicFile{path: path, tmp: f.Name(), f: f}, nil
}

// commit flushes, closes and renames the temporary file over path.
func (a *atomicFile) commit() error {
	if a.f == nil {
		return fileErr(a.path, nil, "already closed")
	}
	f := a.f
	a.f = nil
	err := f.Chmod(atomicfile.Mode(a.path))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(a.tmp)
		return fileErr(a.path, err, "cannot finish writing (is the disk full?)")
	}
	if err := os.Rename(a.tmp, a.path); err != nil {
		os.Remove(a.tmp)
		return fileErr(a.path, err, "cannot move the finished file into place")
	}
	return nil
}

// installFile makes tmp, a finished temporary file written by another
// process (ffmpeg), the file path, as commit does for one written here.
func installFile(tmp, path string) error {
	f, err := os.OpenFile(tmp, os.O_RDWR, 0)
	if err != nil {
		os.Remove(tmp)
		return fileErr(path, err, "cannot finish writing")
	}
	return (&atomicFile{path: path, tmp: tmp, f: f}).commit()
}

// abort removes the temporary file.
func (a *atomicFile) abort() {
	if a.f != nil {
		a.f.Close()
		a.f = nil
	}
	os.Remove(a.tmp)
}
