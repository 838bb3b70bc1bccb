package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"h3studio/ui/studio"
)

// openLibraryFlag opens the library folder given with --library, making it
// when it is not there, except under the mount point of a disk that is not
// connected (volumeOf): what is made there would land on the startup disk.
func openLibraryFlag(dir string) (*studio.Library, error) {
	if v := volumeOf(dir); v != "" {
		if _, err := os.Stat(v); err != nil || !isMountPoint(v) {
			return nil, fmt.Errorf("%s: %w", v, errDiskMissing)
		}
	}
	return studio.OpenLibrary(dir, nil)
}

// libraryFlagFailed reports a --library that can't be used on one stderr
// line naming the path and what was expected, and returns the exit status
// of the CLI's contract: 2 (an invalid request) when the path can't be a
// library folder as given (a file in the way, no permission, a read-only
// or disconnected disk), 1 for any other failure reading it.
func libraryFlagFailed(stderr io.Writer, cmd, dir string, err error) int {
	fmt.Fprintf(stderr, "%s: --library %s can't be used: %s (expected a folder H3 Studio can make, or read and write takes in)\n", cmd, dir, libraryCause(err))
	for _, e := range []error{errDiskMissing, syscall.ENOTDIR, syscall.EEXIST, syscall.EACCES, syscall.EPERM, syscall.EROFS, syscall.ENAMETOOLONG} {
		if errors.Is(err, e) {
			return 2
		}
	}
	return 1
}

// libraryCause says why a library folder can't be used, without the
// path the message already names.
func libraryCause(err error) string {
	switch {
	case errors.Is(err, errDiskMissing):
		return err.Error()
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EEXIST):
		var pe *os.PathError
		if errors.As(err, &pe) {
			return "a file is in the way (" + pe.Path + ")"
		}
	}
	return errorCause(err)
}
