package hfhub

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// Entry is one item of a tree listing.
type Entry struct {
	Type string `json:"type"` // "file" or "directory"
	Path string `json:"path"`
	Size int64  `json:"size"`
	// OID is the git blob sha1 (of the LFS pointer for an LFS file).
	OID string    `json:"oid"`
	LFS *LFSEntry `json:"lfs,omitempty"`
}

// LFSEntry is the LFS part of a file entry.
type LFSEntry struct {
	OID         string `json:"oid"` // sha256 of the content
	Size        int64  `json:"size"`
	PointerSize int64  `json:"pointerSize"`
}

// Etag is what the Hub calls the file's etag and what names its blob in
// the cache: the sha256 of an LFS file, the git sha1 of a small one.
func (e Entry) Etag() string {
	if e.LFS != nil {
		return e.LFS.OID
	}
	return e.OID
}

// ParseTreePage parses one page of GET /api/models/{repo}/tree/…: a JSON
// array of entries. Files must have a safe relative path, a size and hex
// hashes (git sha1; sha256 for LFS); directories are dropped.
func ParseTreePage(b []byte) ([]Entry, error) {
	var raw []Entry
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("not a JSON array of tree entries: %w", err)
	}
	out := raw[:0]
	for i, e := range raw {
		switch e.Type {
		case "directory":
			continue
		case "file":
		default:
			return nil, fmt.Errorf("entry %d (%q): type %q, want file or directory", i, trunc(e.Path, 80), trunc(e.Type, 20))
		}
		if err := CheckRepoPath(e.Path); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		if e.Size < 0 {
			return nil, fmt.Errorf("entry %d (%s): negative size %d", i, e.Path, e.Size)
		}
		if !isHex(e.OID, 40) {
			return nil, fmt.Errorf("entry %d (%s): oid %q is not a git sha1 (40 lowercase hex digits)", i, e.Path, trunc(e.OID, 50))
		}
		if e.LFS != nil {
			if !isHex(e.LFS.OID, 64) {
				return nil, fmt.Errorf("entry %d (%s): lfs.oid %q is not a sha256 (64 lowercase hex digits)", i, e.Path, trunc(e.LFS.OID, 80))
			}
			if e.LFS.Size != e.Size {
				return nil, fmt.Errorf("entry %d (%s): lfs.size %d differs from size %d", i, e.Path, e.LFS.Size, e.Size)
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// CheckRepoPath rejects a repo path that could escape the folder it is written under.
func CheckRepoPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("empty path")
	case strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || strings.ContainsRune(p, 0):
		return fmt.Errorf("path %q is not a relative slash-separated path", trunc(p, 80))
	case path.Clean(p) != p:
		return fmt.Errorf("path %q is not clean", trunc(p, 80))
	}
	for _, s := range strings.Split(p, "/") {
		if s == ".." || s == "." || s == "" {
			return fmt.Errorf("path %q has a %q segment", trunc(p, 80), s)
		}
		if s == ".git" {
			return fmt.Errorf("path %q is inside .git", trunc(p, 80))
		}
	}
	if len(p) > 1024 {
		return fmt.Errorf("path of %d bytes is too long", len(p))
	}
	return nil
}
