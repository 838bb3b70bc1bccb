package media

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"strings"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
	"golang.org/x/image/webp"
)

// Image limits. A picture is refused from its header, before any pixel is
// decoded, when it is larger than this: 20000×20000 (400 MP, 1.6 GB as
// RGBA) is refused, a 100 MP medium-format photo is accepted.
const (
	MaxImagePixels    = 120_000_000
	MaxImageSide      = 1 << 16
	MaxImageFileBytes = 1 << 30
)

// ImageHeader is what a picture's header says, read without decoding pixels.
type ImageHeader struct {
	Format        string // FormatPNG, …
	Width, Height int    // displayed size (EXIF orientation applied)
	Orientation   int    // EXIF orientation 1..8
}

// PortableImageFormat reports whether the pure-Go decoders read format.
func PortableImageFormat(format string) bool {
	switch format {
	case FormatPNG, FormatJPEG, FormatGIF, FormatWebP, FormatBMP, FormatTIFF:
		return true
	}
	return false
}

// ReadImageHeader sniffs data and reads its header. path names the file in
// errors. It fails for non-images, unsupported formats and images over the
// size limits.
func ReadImageHeader(path string, data []byte) (ImageHeader, error) {
	format, kind := Sniff(data)
	if kind != KindImage {
		return ImageHeader{}, notKind(path, format, "an image")
	}
	if !PortableImageFormat(format) {
		return ImageHeader{}, fileErr(path, ErrUnsupported, "%s images need the macOS (ImageIO) build; this build reads PNG, JPEG, GIF, WebP, BMP and TIFF", format)
	}
	var cfg image.Config
	err := safely(func() (err error) {
		cfg, err = decodeConfig(format, data)
		return err
	})
	if err != nil {
		return ImageHeader{}, decodeErr(path, format, err)
	}
	if err := checkImageSize(path, format, cfg.Width, cfg.Height); err != nil {
		return ImageHeader{}, err
	}
	o := Orientation(format, data)
	w, h := OrientedSize(cfg.Width, cfg.Height, o)
	return ImageHeader{Format: format, Width: w, Height: h, Orientation: o}, nil
}

func checkImageSize(path, format string, w, h int) error {
	if w <= 0 || h <= 0 {
		return fileErr(path, nil, "%s header gives an empty picture (%d×%d)", format, w, h)
	}
	if w > MaxImageSide || h > MaxImageSide || int64(w)*int64(h) > MaxImagePixels {
		return fileErr(path, ErrTooLarge, "picture is %d×%d (%.0f megapixels); the limit is %d megapixels and %d pixels a side",
			w, h, float64(w)*float64(h)/1e6, MaxImagePixels/1_000_000, MaxImageSide)
	}
	return nil
}

// DecodeImage decodes an encoded picture the way the reference pipeline's
// load_image does: EXIF orientation applied (PIL exif_transpose), then
// converted to RGB (PIL convert("RGB"): alpha dropped without compositing,
// palettes looked up, grey replicated). The result is opaque RGBA at the
// displayed size. GIFs give their first frame.
func DecodeImage(path string, data []byte) (*image.RGBA, error) {
	hdr, err := ReadImageHeader(path, data)
	if err != nil {
		return nil, err
	}
	var img image.Image
	err = safely(func() (err error) {
		img, err = decode(hdr.Format, data)
		return err
	})
	if err != nil {
		return nil, decodeErr(path, hdr.Format, err)
	}
	return Orient(toRGBA(img), hdr.Orientation), nil
}

// ReadImageFile reads and decodes a picture file (see DecodeImage).
func ReadImageFile(path string) (*image.RGBA, error) {
	data, err := readFileLimited(path, MaxImageFileBytes)
	if err != nil {
		return nil, err
	}
	return DecodeImage(path, data)
}

func readFileLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fileErr(path, err, "cannot open")
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fileErr(path, err, "cannot read")
	}
	if st.IsDir() {
		return nil, fileErr(path, nil, "is a folder, not a file")
	}
	if st.Size() > limit {
		return nil, fileErr(path, ErrTooLarge, "file is %d MB; the limit is %d MB", st.Size()>>20, limit>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fileErr(path, err, "cannot read")
	}
	if len(data) == 0 {
		return nil, fileErr(path, nil, "file is empty")
	}
	return data, nil
}

// codecs are the decoders of the supported formats, by format name.
var codecs = map[string]struct {
	config func(io.Reader) (image.Config, error)
	decode func(io.Reader) (image.Image, error)
}{
	FormatPNG:  {png.DecodeConfig, png.Decode},
	FormatJPEG: {jpeg.DecodeConfig, jpeg.Decode},
	FormatGIF:  {gif.DecodeConfig, decodeGIF},
	FormatWebP: {webp.DecodeConfig, webp.Decode},
	FormatBMP:  {bmp.DecodeConfig, bmp.Decode},
	FormatTIFF: {tiff.DecodeConfig, tiff.Decode},
}

// decodeGIF decodes a GIF's first frame onto its logical screen, the size
// its header announces, as PIL opens a GIF: image/gif returns the frame
// alone, which may be smaller than the screen and placed anywhere in it.
// The rest of the screen is the frame's transparent index where it has one,
// else index 0 (PIL fills a first frame's canvas the same way).
func decodeGIF(r io.Reader) (image.Image, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	cfg, err := gif.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	img, err := gif.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	screen := image.Rect(0, 0, cfg.Width, cfg.Height)
	frame, ok := img.(*image.Paletted)
	if !ok || frame.Bounds() == screen {
		return img, nil
	}
	canvas := image.NewPaletted(screen, frame.Palette)
	fill := uint8(0)
	for i, c := range frame.Palette {
		if _, _, _, a := c.RGBA(); a == 0 {
			fill = uint8(i)
			break
		}
	}
	for i := range canvas.Pix {
		canvas.Pix[i] = fill
	}
	r0 := frame.Bounds().Intersect(screen)
	for y := r0.Min.Y; y < r0.Max.Y; y++ {
		copy(canvas.Pix[canvas.PixOffset(r0.Min.X, y):canvas.PixOffset(r0.Max.X, y)], frame.Pix[frame.PixOffset(r0.Min.X, y):frame.PixOffset(r0.Max.X, y)])
	}
	return canvas, nil
}

func decodeConfig(format string, data []byte) (image.Config, error) {
	c, ok := codecs[format]
	if !ok {
		return image.Config{}, ErrUnsupported
	}
	return c.config(bytes.NewReader(data))
}

func decode(format string, data []byte) (image.Image, error) {
	c, ok := codecs[format]
	if !ok {
		return nil, ErrUnsupported
	}
	return c.decode(bytes.NewReader(data))
}

// safely runs f, turning a decoder panic into an error.
func safely(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decoder failed: %v", r)
		}
	}()
	return f()
}

func decodeErr(path, format string, err error) error {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return fileErr(path, nil, "truncated %s data (the file ends early)", format)
	case errors.Is(err, ErrUnsupported):
		return fileErr(path, err, "%s variant not supported", format)
	}
	if msg := err.Error(); strings.Contains(msg, "not enough pixel data") || strings.Contains(msg, "short Huffman data") ||
		strings.Contains(msg, "missing SOS marker") {
		return fileErr(path, nil, "truncated %s data (the file ends early)", format)
	}
	switch err.(type) {
	case png.UnsupportedError, jpeg.UnsupportedError, tiff.UnsupportedError:
		return fileErr(path, ErrUnsupported, "%s variant not supported (%v)", format, err)
	}
	return fileErr(path, err, "corrupt %s data", format)
}

func notKind(path, format, want string) error {
	claimed := extFormat(path)
	if claimed != FormatUnknown && claimed != format {
		return fileErr(path, nil, "not %s: the name says %s but the content is %s", want, claimed, describeFormat(format))
	}
	return fileErr(path, nil, "not %s: the content is %s", want, describeFormat(format))
}

// toRGBA converts any decoded image to opaque RGBA with PIL's
// convert("RGB") semantics: colour channels are taken un-premultiplied and
// alpha is dropped (not composited over a background).
func toRGBA(img image.Image) *image.RGBA {
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	put := func(i int, r, g, bl uint8) {
		out.Pix[i], out.Pix[i+1], out.Pix[i+2], out.Pix[i+3] = r, g, bl, 255
	}
	switch src := img.(type) {
	case *image.RGBA:
		for y := 0; y < b.Dy(); y++ {
			for x := 0; x < b.Dx(); x++ {
				s := src.PixOffset(b.Min.X+x, b.Min.Y+y)
				c := color.NRGBAModel.Convert(color.RGBA{src.Pix[s], src.Pix[s+1], src.Pix[s+2], src.Pix[s+3]}).(color.NRGBA)
				put(out.PixOffset(x, y), c.R, c.G, c.B)
			}
		}
	case *image.NRGBA:
		for y := 0; y < b.Dy(); y++ {
			for x := 0; x < b.Dx(); x++ {
				s := src.PixOffset(b.Min.X+x, b.Min.Y+y)
				put(out.PixOffset(x, y), src.Pix[s], src.Pix[s+1], src.Pix[s+2])
			}
		}
	case *image.YCbCr:
		if r := ycbcrToRGBA(src); r != nil {
			return r
		}
		for y := 0; y < b.Dy(); y++ {
			for x := 0; x < b.Dx(); x++ {
				c := src.YCbCrAt(b.Min.X+x, b.Min.Y+y)
				r, g, bl := color.YCbCrToRGB(c.Y, c.Cb, c.Cr)
				put(out.PixOffset(x, y), r, g, bl)
			}
		}
	case *image.Gray:
		for y := 0; y < b.Dy(); y++ {
			for x := 0; x < b.Dx(); x++ {
				v := src.Pix[src.PixOffset(b.Min.X+x, b.Min.Y+y)]
				put(out.PixOffset(x, y), v, v, v)
			}
		}
	case *image.Paletted:
		pal := make([][3]uint8, len(src.Palette))
		for i, c := range src.Palette {
			n := color.NRGBAModel.Convert(c).(color.NRGBA)
			if nc, ok := c.(color.NRGBA); ok {
				n = nc
			}
			pal[i] = [3]uint8{n.R, n.G, n.B}
		}
		for y := 0; y < b.Dy(); y++ {
			for x := 0; x < b.Dx(); x++ {
				var p [3]uint8
				if i := int(src.Pix[src.PixOffset(b.Min.X+x, b.Min.Y+y)]); i < len(pal) {
					p = pal[i]
				}
				put(out.PixOffset(x, y), p[0], p[1], p[2])
			}
		}
	default:
		for y := 0; y < b.Dy(); y++ {
			for x := 0; x < b.Dx(); x++ {
				c := color.NRGBA64Model.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA64)
				put(out.PixOffset(x, y), uint8(c.R>>8), uint8(c.G>>8), uint8(c.B>>8))
			}
		}
	}
	return out
}

// ToRGBA converts img to opaque RGBA (see DecodeImage for the semantics);
// an opaque *image.RGBA at the origin is returned as is.
func ToRGBA(img image.Image) *image.RGBA {
	if r, ok := img.(*image.RGBA); ok && r.Bounds().Min == (image.Point{}) && r.Opaque() {
		return r
	}
	return toRGBA(img)
}
