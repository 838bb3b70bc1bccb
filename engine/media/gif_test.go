package media

import (
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"testing"
)

// TestGIFFrameOnItsScreen: a GIF whose first frame is smaller than its
// logical screen and placed inside it decodes to the screen's size (the
// size its header announces), the frame at its place and the rest the
// transparent index (black once converted to RGB).
func TestGIFFrameOnItsScreen(t *testing.T) {
	pal := color.Palette{color.RGBA{10, 20, 30, 255}, color.RGBA{200, 0, 0, 255}, color.RGBA{}}
	frame := image.NewPaletted(image.Rect(3, 2, 7, 5), pal)
	for i := range frame.Pix {
		frame.Pix[i] = 1
	}
	var buf bytes.Buffer
	err := gif.EncodeAll(&buf, &gif.GIF{Image: []*image.Paletted{frame}, Delay: []int{0},
		Config: image.Config{ColorModel: pal, Width: 10, Height: 8}})
	if err != nil {
		t.Fatal(err)
	}
	hdr, err := ReadImageHeader("f.gif", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	img, err := DecodeImage("f.gif", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b != image.Rect(0, 0, 10, 8) || hdr.Width != 10 || hdr.Height != 8 {
		t.Fatalf("decoded %v, header %d×%d, want the 10×8 screen", b, hdr.Width, hdr.Height)
	}
	inside, outside := img.At(4, 3), img.At(0, 0)
	if r, _, _, _ := inside.RGBA(); r>>8 != 200 {
		t.Errorf("inside the frame %v, want the frame's red", inside)
	}
	if r, g, b, _ := outside.RGBA(); r != 0 || g != 0 || b != 0 {
		t.Errorf("outside the frame %v, want the transparent index's black", outside)
	}
}
