// Command mkicon draws H3 Studio's app icon and writes it as a 1024×1024 PNG
// (resources/icon.png). The drawing is analytic (supersampled shapes), so
// the icon is reproducible from this file alone:
//
//	go run ./tools/mkicon -o resources/icon.png
package main

import (
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
)

func main() {
	out := flag.String("o", "resources/icon.png", "output PNG `file`")
	size := flag.Int("size", 1024, "edge length in pixels")
	flag.Parse()
	img := Draw(*size)
	tmp := filepath.Join(filepath.Dir(*out), "."+filepath.Base(*out)+".tmp")
	f, err := os.Create(tmp)
	if err == nil {
		err = png.Encode(f, img)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Rename(tmp, *out)
	}
	if err != nil {
		os.Remove(tmp)
		fmt.Fprintln(os.Stderr, "mkicon:", err)
		os.Exit(1)
	}
}

// Draw renders the icon at n×n pixels: a macOS-style rounded square with a
// dusk gradient, a soft horizon glow, a play mark and three sound arcs.
func Draw(n int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, n, n))
	const ss = 4 // supersampling per axis
	s := float64(n) / 1024
	// Geometry in 1024-unit space.
	const (
		x0, y0, x1, y1 = 100.0, 100.0, 924.0, 924.0 // the tile (Apple's grid: 824 px body)
		radius         = 185.0
	)
	for py := 0; py < n; py++ {
		for px := 0; px < n; px++ {
			var r, g, b, a float64
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					x := (float64(px) + (float64(sx)+0.5)/ss) / s
					y := (float64(py) + (float64(sy)+0.5)/ss) / s
					cr, cg, cb, ca := shade(x, y, x0, y0, x1, y1, radius)
					r += cr * ca
					g += cg * ca
					b += cb * ca
					a += ca
				}
			}
			if a == 0 {
				continue
			}
			img.SetNRGBA(px, py, color.NRGBA{
				R: clamp8(r / a), G: clamp8(g / a), B: clamp8(b / a),
				A: clamp8(a / (ss * ss)),
			})
		}
	}
	return img
}

// shade returns the colour (0..1 channels) and coverage of one sample.
func shade(x, y, x0, y0, x1, y1, radius float64) (r, g, b, a float64) {
	// Drop shadow below the tile.
	if !inRoundRect(x, y, x0, y0, x1, y1, radius) {
		d := roundRectDist(x, y-14, x0+6, y0+6, x1-6, y1-6, radius)
		if d < 28 {
			t := 1 - d/28
			return 0, 0, 0, 0.30 * t * t
		}
		return 0, 0, 0, 0
	}
	u := (x - x0) / (x1 - x0)
	v := (y - y0) / (y1 - y0)
	// Dusk gradient: deep indigo at the top to violet, warm near the horizon.
	top := [3]float64{0.11, 0.10, 0.33}
	mid := [3]float64{0.36, 0.20, 0.62}
	low := [3]float64{0.96, 0.48, 0.40}
	var c [3]float64
	if v < 0.62 {
		c = mix(top, mid, smooth(v/0.62))
	} else {
		c = mix(mid, low, smooth((v-0.62)/0.38))
	}
	// Horizon glow around the sun position.
	gx, gy := 0.5, 0.80
	glow := math.Exp(-((u-gx)*(u-gx)*6 + (y-y0-(y1-y0)*gy)*(y-y0-(y1-y0)*gy)/(824*824)*30))
	c = mix(c, [3]float64{1.0, 0.80, 0.55}, 0.55*glow)
	// Thin light edge along the top of the tile.
	if d := roundRectDist(x, y, x0, y0, x1, y1, radius); d > -5 && v < 0.5 {
		c = mix(c, [3]float64{1, 1, 1}, 0.15)
	}
	// The play mark, a rounded triangle, slightly left of centre.
	px, py := x-430, y-512
	if inTriangle(px, py) {
		return 0.99, 0.98, 1.0, 1
	}
	// Three sound arcs to the right of the mark.
	for i, rad := range []float64{150, 222, 294} {
		dx, dy := x-470, y-512
		d := math.Hypot(dx, dy)
		ang := math.Atan2(dy, dx)
		span := 0.62 - 0.06*float64(i)
		if math.Abs(d-rad) < 20 && math.Abs(ang) < span {
			alpha := 0.92 - 0.22*float64(i)
			w := mix(c, [3]float64{1, 1, 1}, alpha)
			return w[0], w[1], w[2], 1
		}
		// Round caps.
		for _, e := range []float64{-span, span} {
			cx, cy := 470+rad*math.Cos(e), 512+rad*math.Sin(e)
			if math.Hypot(x-cx, y-cy) < 20 {
				alpha := 0.92 - 0.22*float64(i)
				w := mix(c, [3]float64{1, 1, 1}, alpha)
				return w[0], w[1], w[2], 1
			}
		}
	}
	return c[0], c[1], c[2], 1
}

// inTriangle reports whether (x, y), relative to the mark's centre, lies in
// a right-pointing triangle with rounded corners.
func inTriangle(x, y float64) bool {
	const h, r = 150.0, 34.0 // half height, corner radius
	// Triangle vertices (left top, left bottom, tip), shrunk by r, then the
	// point's distance to that smaller triangle must be < r.
	ax, ay := -h*0.85+r, -h+r*1.6
	bx, by := -h*0.85+r, h-r*1.6
	cx, cy := h*1.05-r*1.6, 0.0
	return distTriangle(x, y, ax, ay, bx, by, cx, cy) < r
}

func distTriangle(x, y, ax, ay, bx, by, cx, cy float64) float64 {
	if sameSide(x, y, ax, ay, bx, by, cx, cy) && sameSide(x, y, bx, by, cx, cy, ax, ay) && sameSide(x, y, cx, cy, ax, ay, bx, by) {
		return 0
	}
	return math.Min(distSeg(x, y, ax, ay, bx, by), math.Min(distSeg(x, y, bx, by, cx, cy), distSeg(x, y, cx, cy, ax, ay)))
}

func sameSide(x, y, ax, ay, bx, by, cx, cy float64) bool {
	cross := func(px, py float64) float64 { return (bx-ax)*(py-ay) - (by-ay)*(px-ax) }
	return cross(x, y)*cross(cx, cy) >= 0
}

func distSeg(x, y, ax, ay, bx, by float64) float64 {
	dx, dy := bx-ax, by-ay
	t := ((x-ax)*dx + (y-ay)*dy) / (dx*dx + dy*dy)
	t = math.Max(0, math.Min(1, t))
	return math.Hypot(x-(ax+t*dx), y-(ay+t*dy))
}

func inRoundRect(x, y, x0, y0, x1, y1, r float64) bool {
	return roundRectDist(x, y, x0, y0, x1, y1, r) <= 0
}

// roundRectDist is the signed distance to a rounded rectangle's edge
// (negative inside).
func roundRectDist(x, y, x0, y0, x1, y1, r float64) float64 {
	cx, cy := (x0+x1)/2, (y0+y1)/2
	hx, hy := (x1-x0)/2-r, (y1-y0)/2-r
	qx, qy := math.Abs(x-cx)-hx, math.Abs(y-cy)-hy
	out := math.Hypot(math.Max(qx, 0), math.Max(qy, 0))
	in := math.Min(math.Max(qx, qy), 0)
	return out + in - r
}

func mix(a, b [3]float64, t float64) [3]float64 {
	return [3]float64{a[0] + (b[0]-a[0])*t, a[1] + (b[1]-a[1])*t, a[2] + (b[2]-a[2])*t}
}

func smooth(t float64) float64 {
	t = math.Max(0, math.Min(1, t))
	return t * t * (3 - 2*t)
}

func clamp8(v float64) uint8 {
	v = math.Round(v * 255)
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return uint8(v)
}
