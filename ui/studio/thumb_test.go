package studio_test

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"

	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// hugePNG is a valid PNG header for a w×h RGB picture followed by a small
// compressed fragment: decoding it would allocate w·h·4 bytes.
func hugePNG(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 2
	chunk("IHDR", ihdr)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(make([]byte, 1<<20))
	zw.Close()
	chunk("IDAT", z.Bytes())
	chunk("IEND", nil)
	return b.Bytes()
}

// TestHugeThumbnailIsNotDecoded: a take folder whose thumb.png claims
// 20000×20000 pixels is listed at once, without its thumbnail, instead of
// stalling the library for seconds and gigabytes.
func TestHugeThumbnailIsNotDecoded(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	e.tiny()
	e.s.Generate()
	sn := e.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == 1 && sn.Takes[0].Thumb != nil })
	dir := sn.Takes[0].Dir
	if err := os.WriteFile(filepath.Join(dir, studio.ThumbFile), hugePNG(20000, 20000), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	lib, err := studio.OpenLibrary(e.lib, nil)
	if err != nil {
		t.Fatal(err)
	}
	takes, err := lib.List()
	if err != nil || len(takes) != 1 {
		t.Fatalf("list: %d takes, %v", len(takes), err)
	}
	if takes[0].Thumb != nil {
		t.Error("the huge thumbnail was decoded")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("listing took %v", d)
	}
}
