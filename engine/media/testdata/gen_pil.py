#!/usr/bin/python3
"""Regenerates engine/media/testdata/pil: PIL fixtures for H3 Studio's media parity tests.

Run with Debian's python3-pil (and python3-numpy):  /usr/bin/python3 engine/media/testdata/gen_pil.py
Everything is seeded, so a rerun with the same Pillow writes the same files. The Go tests read
pil/manifest.json; each case names a source file, what was done to it, and the expected PNG.

What the cases cover (the reference pipeline's own image operations):
  * resize:  Image.resize((w, h), LANCZOS or BICUBIC) of an RGB image (diffusers VaeImageProcessor.resize,
             the first keyframe's stretch, reference images and reference video frames);
  * cover:   the second keyframe's cover-crop (scale = max(W/w, H/h), round each side, LANCZOS, centre crop);
  * rgb:     load_image's convert("RGB") of RGBA / paletted / grey sources (no resize);
  * exif:    ImageOps.exif_transpose for the 8 EXIF orientations (JPEG, TIFF and WebP carriers).
"""
import io, json, os, sys

import numpy as np
from PIL import Image, ImageOps, __version__ as PIL_VERSION

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "pil")
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(20260901)


def save(img, name, **kw):
    img.save(os.path.join(OUT, name), **kw)
    return name


def noise(w, h):
    return Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8), "RGB")


def scene(w, h):
    # Smooth gradients plus hard edges and a few saturated blocks: the content that rings under LANCZOS.
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    r = 255 * x / max(1, w - 1)
    g = 255 * (0.5 + 0.5 * np.sin(x / 3.0 + y / 5.0))
    b = 255 * y / max(1, h - 1)
    a = np.stack([r, g, b], -1)
    a[h // 4: h // 2, w // 5: w // 2] = (250, 10, 10)
    a[(h * 2) // 3:, (w * 3) // 5: (w * 4) // 5] = (5, 5, 240)
    a[:, ::7] = 255 - a[:, ::7]
    return Image.fromarray(np.clip(a + rng.normal(0, 6, a.shape), 0, 255).round().astype(np.uint8), "RGB")


def blocks(w, h):
    # Four flat quadrants with distinct colours: orientation is unambiguous and JPEG-safe.
    a = np.zeros((h, w, 3), np.uint8)
    a[: h // 2, : w // 2] = (230, 30, 30)
    a[: h // 2, w // 2:] = (30, 200, 30)
    a[h // 2:, : w // 2] = (30, 30, 220)
    a[h // 2:, w // 2:] = (240, 240, 40)
    return Image.fromarray(a, "RGB")


cases = []
sources = {
    "noise_61x47.png": noise(61, 47),
    "scene_97x53.png": scene(97, 53),
    "tall_40x150.png": scene(40, 150),
    "scene_256x144.png": scene(256, 144),
}
for name, img in sources.items():
    save(img, name)

resize_jobs = [
    ("noise_61x47.png", 128, 96, "lanczos"),   # upscale, aspect changed
    ("noise_61x47.png", 32, 32, "lanczos"),    # downscale
    ("noise_61x47.png", 61, 23, "lanczos"),    # vertical only
    ("noise_61x47.png", 17, 47, "lanczos"),    # horizontal only
    ("scene_97x53.png", 64, 32, "lanczos"),
    ("scene_97x53.png", 160, 96, "lanczos"),
    ("tall_40x150.png", 96, 32, "lanczos"),    # stretch, big aspect change
    ("scene_256x144.png", 64, 32, "lanczos"),  # 4x reduction (wide support)
    ("scene_256x144.png", 33, 19, "lanczos"),  # odd factors
    ("noise_61x47.png", 96, 64, "bicubic"),
    ("scene_97x53.png", 40, 30, "bicubic"),
]
for src, w, h, flt in resize_jobs:
    f = Image.Resampling.LANCZOS if flt == "lanczos" else Image.Resampling.BICUBIC
    out = Image.open(os.path.join(OUT, src)).convert("RGB").resize((w, h), f)
    name = save(out, f"resize_{flt}_{src[:-4]}_{w}x{h}.png")
    cases.append({"op": "resize", "src": src, "w": w, "h": h, "filter": flt, "want": name})

# Second keyframe: cover-crop exactly as the reference computes it.
for src, W, H in [("scene_97x53.png", 64, 64), ("noise_61x47.png", 96, 32), ("tall_40x150.png", 64, 96),
                  ("scene_256x144.png", 96, 64)]:
    img = Image.open(os.path.join(OUT, src)).convert("RGB")
    scale = max(W / img.size[0], H / img.size[1])
    rw, rh = max(W, round(img.size[0] * scale)), max(H, round(img.size[1] * scale))
    left, top = max(0, (rw - W) // 2), max(0, (rh - H) // 2)
    out = img.resize((rw, rh), Image.Resampling.LANCZOS).crop((left, top, left + W, top + H))
    name = save(out, f"cover_{src[:-4]}_{W}x{H}.png")
    cases.append({"op": "cover", "src": src, "w": W, "h": H, "filter": "lanczos", "want": name})

# convert("RGB") of other modes: RGBA drops alpha (no compositing), P uses the palette, L replicates.
a = np.asarray(scene(45, 31)).copy()
alpha = rng.integers(0, 256, (31, 45), dtype=np.uint8)
alpha[0, :] = 0
rgba = Image.fromarray(np.dstack([a, alpha]), "RGBA")
conv = [("rgba_45x31.png", rgba), ("pal_45x31.gif", scene(45, 31).quantize(64)),
        ("gray_45x31.png", scene(45, 31).convert("L")), ("pal_trns_45x31.png", rgba.quantize(32))]
for name, img in conv:
    save(img, name)
    out = Image.open(os.path.join(OUT, name)).convert("RGB")
    want = save(out, "rgb_" + name.rsplit(".", 1)[0] + ".png")
    cases.append({"op": "rgb", "src": name, "want": want})

# EXIF orientation: exif_transpose then convert("RGB"). Lossy carriers are compared with a tolerance.
base = blocks(48, 32)
for o in range(1, 9):
    for ext, kw in [("jpg", {"quality": 95}), ("webp", {"lossless": True}), ("tif", {})]:
        exif = Image.Exif()
        exif[0x0112] = o
        name = f"orient{o}.{ext}"
        save(base, name, exif=exif.tobytes(), **kw)
        src = Image.open(os.path.join(OUT, name))
        if ext == "tif":
            # Pillow 9.4 rotates a TIFF while loading it through libtiff and exif_transpose then turns it a
            # second time, so the TIFF carrier is held to the JPEG/WebP answer (the picture shown upright).
            src = Image.open(os.path.join(OUT, f"orient{o}.webp"))
        out = ImageOps.exif_transpose(src).convert("RGB")
        want = save(out, f"orient{o}_{ext}_want.png")
        cases.append({"op": "exif", "src": name, "want": want, "orientation": o})

# A photo-like JPEG (4:2:0) to measure decoder differences between Go and libjpeg-turbo.
# Subsampling 2 = 4:2:0, 1 = 4:2:2, 0 = 4:4:4; odd sizes exercise the chroma edge columns and rows.
for (w, h), sub in [((97, 53), 2), ((64, 48), 2), ((75, 41), 1), ((51, 37), 0)]:
    name = save(scene(w, h), f"scene_{w}x{h}_s{sub}.jpg", quality=90, subsampling=sub)
    want = save(Image.open(os.path.join(OUT, name)).convert("RGB"), f"scene_{w}x{h}_s{sub}_jpg_want.png")
    cases.append({"op": "rgb", "src": name, "want": want, "lossy": True})

with open(os.path.join(OUT, "manifest.json"), "w") as f:
    json.dump({"pillow": PIL_VERSION, "numpy": np.__version__, "cases": cases}, f, indent=1)
print(f"wrote {len(cases)} cases with Pillow {PIL_VERSION} into {OUT}", file=sys.stderr)
