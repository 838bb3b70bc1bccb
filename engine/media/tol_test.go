package media

// jpegTolerance bounds the difference between Go's JPEG decoder and
// libjpeg-turbo (PIL) in 8-bit levels (see docs/media.md).
const jpegTolerance = 3
