package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/png"

	"golang.org/x/image/draw"
)

// icnsSizes are the PNG-backed icon types macOS reads (10.8 and later):
// OSType and edge length in pixels.
var icnsSizes = []struct {
	typ  string
	edge int
}{
	{"icp4", 16}, {"icp5", 32}, {"icp6", 64}, {"ic07", 128}, {"ic08", 256}, {"ic09", 512}, {"ic10", 1024},
	{"ic11", 32}, {"ic12", 64}, {"ic13", 256}, {"ic14", 512}, // @2x of 16, 32, 128, 256
}

// EncodeICNS writes an Apple icon family: a big-endian "icns" header, then
// one element per size, each an OSType, its length, and a PNG.
func EncodeICNS(src image.Image) ([]byte, error) {
	var body bytes.Buffer
	for _, s := range icnsSizes {
		img := image.NewNRGBA(image.Rect(0, 0, s.edge, s.edge))
		draw.CatmullRom.Scale(img, img.Bounds(), src, src.Bounds(), draw.Src, nil)
		var p bytes.Buffer
		if err := png.Encode(&p, img); err != nil {
			return nil, fmt.Errorf("icns %s: %w", s.typ, err)
		}
		body.WriteString(s.typ)
		binary.Write(&body, binary.BigEndian, uint32(8+p.Len()))
		body.Write(p.Bytes())
	}
	var out bytes.Buffer
	out.WriteString("icns")
	binary.Write(&out, binary.BigEndian, uint32(8+body.Len()))
	out.Write(body.Bytes())
	return out.Bytes(), nil
}

// DecodeICNS lists an icon family's elements (for tests and checks).
func DecodeICNS(b []byte) (map[string]image.Image, error) {
	if len(b) < 8 || string(b[:4]) != "icns" || int(binary.BigEndian.Uint32(b[4:])) != len(b) {
		return nil, fmt.Errorf("icns: bad header")
	}
	out := map[string]image.Image{}
	for i := 8; i < len(b); {
		if i+8 > len(b) {
			return nil, fmt.Errorf("icns: truncated element at %d", i)
		}
		typ := string(b[i : i+4])
		n := int(binary.BigEndian.Uint32(b[i+4:]))
		if n < 8 || i+n > len(b) {
			return nil, fmt.Errorf("icns: element %s has length %d", typ, n)
		}
		img, err := png.Decode(bytes.NewReader(b[i+8 : i+n]))
		if err != nil {
			return nil, fmt.Errorf("icns: element %s: %w", typ, err)
		}
		out[typ] = img
		i += n
	}
	return out, nil
}
