package hfhub

import (
	"context"
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
	got, _, err := hashFile(context.Background(), p, lfs)
	return got == etag, err
}

// ctxReader reads r until ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(b)
}

// hashFile hashes the file at p as newHash names it (hex), reading until
// ctx is done; it returns the bytes read.
func hashFile(ctx context.Context, p string, lfs bool) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	h := newHash(lfs, st.Size())
	n, err := io.CopyBuffer(h, ctxReader{ctx, f}, make([]byte, 1<<20))
	if err != nil {
		return "", n, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
