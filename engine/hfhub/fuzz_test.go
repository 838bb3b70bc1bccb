package hfhub

import (
	"path/filepath"
	"strings"
	"testing"
)

func FuzzParseTreePage(f *testing.F) {
	f.Add([]byte(`[{"type":"file","oid":"0123456789abcdef0123456789abcdef01234567","size":3,"path":"a/b.json"}]`))
	f.Add([]byte(`[{"type":"directory","oid":"0123456789abcdef0123456789abcdef01234567","size":0,"path":"FL2VA"},{"type":"file","oid":"0123456789abcdef0123456789abcdef01234567","size":70000,"path":"FL2VA/x.safetensors","lfs":{"oid":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","size":70000,"pointerSize":134}}]`))
	f.Add([]byte(`[{"type":"file","oid":"0123456789abcdef0123456789abcdef01234567","size":1,"path":"../etc/passwd"}]`))
	f.Add([]byte(`{"error":"x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := ParseTreePage(b)
		if err != nil {
			return
		}
		for _, e := range entries {
			// Whatever is accepted stays inside the folder it is written under.
			root := "/r"
			p := filepath.Join(root, filepath.FromSlash(e.Path))
			if !strings.HasPrefix(p, root+"/") || e.Size < 0 || (e.Etag() != e.OID && len(e.Etag()) != 64) {
				t.Fatalf("accepted an unsafe entry %+v", e)
			}
		}
	})
}

func FuzzNextLink(f *testing.F) {
	f.Add(`<https://huggingface.co/api/models/a/b/tree/main?cursor=abc>; rel="next"`)
	f.Add(`<http://x/a>; rel="prev", <http://x/b>; rel="next"`)
	f.Add(`<http://x/a,b>; rel=next`)
	f.Fuzz(func(t *testing.T, v string) {
		n := NextLink([]string{v})
		if n != "" && !strings.Contains(v, n) {
			t.Fatalf("next %q is not in %q", n, v)
		}
	})
}

func FuzzParseMetadata(f *testing.F) {
	f.Add([]byte("5d1c0f4e2b7a9c3d8e6f1a2b4c5d6e7f8a9b0c1d\n0123456789abcdef0123456789abcdef01234567\n1760000000.5\n"))
	f.Add([]byte("x\ny\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseMetadata(b)
		if err == nil && (!isHex(m.Commit, 40) || !(isHex(m.Etag, 40) || isHex(m.Etag, 64))) {
			t.Fatalf("accepted %+v", m)
		}
	})
}

func TestNextLinkAndContentRange(t *testing.T) {
	if got := NextLink([]string{`<http://x/p?c=1>; rel="prev", <http://x/p?c=2>; rel="next"`}); got != "http://x/p?c=2" {
		t.Fatalf("NextLink = %q", got)
	}
	if got := NextLink([]string{`<http://x/p>; rel="last"`}); got != "" {
		t.Fatalf("NextLink without next = %q", got)
	}
	if s, total, ok := parseContentRange("bytes 100-199/1000"); !ok || s != 100 || total != 1000 {
		t.Fatal("Content-Range")
	}
	for _, bad := range []string{"", "bytes x-1/2", "items 1-2/3"} {
		if _, _, ok := parseContentRange(bad); ok {
			t.Fatalf("accepted Content-Range %q", bad)
		}
	}
	for _, p := range []string{"../a", "/a", "a//b", "a/./b", "a\\b", ".git/config", ""} {
		if CheckRepoPath(p) == nil {
			t.Fatalf("accepted repo path %q", p)
		}
	}
}
