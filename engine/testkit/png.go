package testkit

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
)

// PNGHeader is a PNG signature and IHDR chunk claiming a w×h 8-bit RGB
// picture, with a valid CRC and no pixel data: all a reader sees before it
// decides whether the picture's size is acceptable.
func PNGHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 17)
	copy(ihdr, "IHDR")
	binary.BigEndian.PutUint32(ihdr[4:], w)
	binary.BigEndian.PutUint32(ihdr[8:], h)
	ihdr[12], ihdr[13] = 8, 2
	binary.Write(&b, binary.BigEndian, uint32(13))
	b.Write(ihdr)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(ihdr))
	return b.Bytes()
}
