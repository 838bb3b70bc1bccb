package media

import (
	"encoding/binary"
	"image"
)

// EXIF orientation (TIFF tag 0x0112) as stored by cameras, and how it is
// undone. The reference pipeline applies PIL's ImageOps.exif_transpose to
// every keyframe and reference image; these functions do the same for the
// carriers the pure-Go decoders read: JPEG (APP1 "Exif"), TIFF (IFD0 of
// the file itself), WebP (RIFF "EXIF" chunk) and PNG ("eXIf" chunk).

// Orientation reads the EXIF orientation of an encoded image of the given
// format; 1 (upright) when absent or malformed.
func Orientation(format string, data []byte) int {
	switch format {
	case FormatJPEG:
		return jpegOrientation(data)
	case FormatTIFF:
		return tiffOrientation(data)
	case FormatWebP:
		return webpOrientation(data)
	case FormatPNG:
		return pngOrientation(data)
	}
	return 1
}

func tiffOrientation(b []byte) int {
	if len(b) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(b[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	if bo.Uint16(b[2:]) != 42 {
		return 1
	}
	off := int64(bo.Uint32(b[4:]))
	if off < 8 || off+2 > int64(len(b)) {
		return 1
	}
	n := int64(bo.Uint16(b[off:]))
	for i := int64(0); i < n; i++ {
		e := off + 2 + 12*i
		if e+12 > int64(len(b)) {
			return 1
		}
		if bo.Uint16(b[e:]) != 0x0112 {
			continue
		}
		var v int
		switch bo.Uint16(b[e+2:]) {
		case 3: // SHORT
			v = int(bo.Uint16(b[e+8:]))
		case 4: // LONG
			v = int(bo.Uint32(b[e+8:]))
		default:
			return 1
		}
		if v < 1 || v > 8 {
			return 1
		}
		return v
	}
	return 1
}

func exifPayload(b []byte) []byte {
	if len(b) >= 6 && string(b[:6]) == "Exif\x00\x00" {
		return b[6:]
	}
	return b
}

func jpegOrientation(b []byte) int {
	i := 2
	for i+4 <= len(b) {
		if b[i] != 0xff {
			return 1
		}
		m := b[i+1]
		switch {
		case m == 0xff: // fill byte
			i++
			continue
		case m == 0xd8 || m == 0x01 || (m >= 0xd0 && m <= 0xd7):
			i += 2
			continue
		case m == 0xda || m == 0xd9: // start of scan / end of image
			return 1
		}
		n := int(binary.BigEndian.Uint16(b[i+2:]))
		if n < 2 || i+2+n > len(b) {
			return 1
		}
		seg := b[i+4 : i+2+n]
		if m == 0xe1 && len(seg) >= 6 && string(seg[:6]) == "Exif\x00\x00" {
			return tiffOrientation(seg[6:])
		}
		i += 2 + n
	}
	return 1
}

func webpOrientation(b []byte) int {
	for i := 12; i+8 <= len(b); {
		id := string(b[i : i+4])
		n := int(binary.LittleEndian.Uint32(b[i+4:]))
		if n < 0 || i+8+n > len(b) {
			return 1
		}
		if id == "EXIF" {
			return tiffOrientation(exifPayload(b[i+8 : i+8+n]))
		}
		i += 8 + n + n&1
	}
	return 1
}

func pngOrientation(b []byte) int {
	for i := 8; i+12 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[i:]))
		id := string(b[i+4 : i+8])
		if n < 0 || i+12+n > len(b) {
			return 1
		}
		switch id {
		case "eXIf":
			return tiffOrientation(exifPayload(b[i+8 : i+8+n]))
		case "IEND":
			return 1
		}
		i += 12 + n
	}
	return 1
}

// OrientedSize is the displayed size of a w×h image stored with orientation o.
func OrientedSize(w, h, o int) (int, int) {
	if o >= 5 && o <= 8 {
		return h, w
	}
	return w, h
}

// Orient returns img displayed upright for EXIF orientation o (PIL's
// exif_transpose: 2 mirror, 3 rotate 180°, 4 flip, 5 transpose, 6 rotate
// 90° clockwise, 7 transverse, 8 rotate 90° counter-clockwise). o = 1 or
// an invalid value returns img itself.
func Orient(img *image.RGBA, o int) *image.RGBA {
	if o < 2 || o > 8 {
		return img
	}
	b := img.Bounds()
	sw, sh := b.Dx(), b.Dy()
	dw, dh := OrientedSize(sw, sh, o)
	out := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for y := 0; y < dh; y++ {
		for x := 0; x < dw; x++ {
			var sx, sy int
			switch o {
			case 2:
				sx, sy = sw-1-x, y
			case 3:
				sx, sy = sw-1-x, sh-1-y
			case 4:
				sx, sy = x, sh-1-y
			case 5:
				sx, sy = y, x
			case 6:
				sx, sy = y, sh-1-x
			case 7:
				sx, sy = sw-1-y, sh-1-x
			case 8:
				sx, sy = sw-1-y, x
			}
			si := img.PixOffset(b.Min.X+sx, b.Min.Y+sy)
			di := out.PixOffset(x, y)
			copy(out.Pix[di:di+4], img.Pix[si:si+4])
		}
	}
	return out
}
