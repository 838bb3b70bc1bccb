//go:build darwin

package avf

import (
	"context"
	"fmt"
	"image"

	"h3studio/engine/media"
)

// imageSource decodes a picture with ImageIO.
type imageSource struct {
	path string
	info media.Info
	img  *image.RGBA
}

// OpenImage opens a picture with ImageIO (HEIC/HEIF/AVIF and, through
// PlatformImageIO, PNG, JPEG, TIFF, WebP, GIF, BMP). The header is read
// first and pictures over media's size limits are refused before decoding.
// EXIF orientation is applied by ImageIO; colours are converted to sRGB.
func OpenImage(path, format string) (media.Source, error) {
	w, h, o, ok := imageInfo(path)
	if !ok {
		return nil, &media.Error{Path: path, Problem: fmt.Sprintf("cannot read this %s picture (damaged or unsupported)", format)}
	}
	if w <= 0 || h <= 0 || w > media.MaxImageSide || h > media.MaxImageSide || int64(w)*int64(h) > media.MaxImagePixels {
		return nil, &media.Error{Path: path, Problem: fmt.Sprintf("picture is %d×%d; the limit is %d megapixels", w, h, media.MaxImagePixels/1_000_000), Err: media.ErrTooLarge}
	}
	dw, dh := media.OrientedSize(w, h, o)
	return &imageSource{path: path, info: media.Info{Kind: media.KindImage, Width: dw, Height: dh, Format: format}}, nil
}

func (s *imageSource) Info() media.Info { return s.info }

func (s *imageSource) Image(ctx context.Context) (*image.RGBA, error) {
	if s.img != nil {
		return s.img, nil
	}
	img := image.NewRGBA(image.Rect(0, 0, s.info.Width, s.info.Height))
	if !imageDecode(s.path, img.Pix, s.info.Width, s.info.Height) {
		return nil, &media.Error{Path: s.path, Problem: fmt.Sprintf("cannot decode this %s picture (damaged or truncated?)", s.info.Format)}
	}
	s.img = img
	return img, nil
}

func (s *imageSource) Frames(ctx context.Context, max int, each func(int, *image.RGBA) error) error {
	img, err := s.Image(ctx)
	if err != nil {
		return err
	}
	return each(0, img)
}

func (s *imageSource) Audio(context.Context) (media.Audio, error) {
	return media.Audio{}, &media.Error{Path: s.path, Problem: "a picture has no sound", Err: media.ErrNoAudio}
}

func (s *imageSource) Close() error { s.img = nil; return nil }
