package hfhub

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
)

// newHash returns the hash that names a content: sha256 for an LFS file,
// the git blob sha1 ("blob SIZE\0" + bytes) for a small one.
func newHash(lfs bool, size int64) hash.Hash {
	if lfs {
		return sha256.New()
	}
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", size)
	return h
}

// hashKind names the hash for messages.
func hashKind(lfs bool) string {
	if lfs {
		return "sha256"
	}
	return "git sha1"
}

// fileMatches reports whether the file at p hashes to etag (sha256 when lfs, git sha1 otherwise).
func fileMatches(p, etag string, lfs bool) (bool, error) {
	got, err := hashFile(p, lfs)
	return got == etag, err
}

func hashFile(p string, lfs bool) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	h := newHash(lfs, st.Size())
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
