#!/usr/bin/env python3
"""Extra text-side oracle fixtures for H3 Studio's Qwen3-VL encoder, where shared/oracle stops.

H3 Studio's own generator (no third-party source copied). It runs Hugging Face transformers (made with 5.17.0,
torchvision 0.26, Pillow 12.3 on the GPU box's CPU) and writes, into --out:

  presentation.json          H3 presentations with REAL Qwen3 label/timestamp/prompt tokens (the tokenizer.json
                             given with --tokenizer), their DiT tags and the M-RoPE positions transformers'
                             Qwen3VLModel.get_rope_index computes for them (mm_token_type_ids as
                             Qwen3VLProcessor.create_mm_token_type_ids returns them).
  sampling.json              24 fps -> 2 fps reference-video sampling for many frame counts: sample indices, two-frame
                             blocks, block timestamps, the "<t seconds>" labels (Python's :.1f) and their real tokens.
                             The rule is the spec's (H3-ENCODERS-VAES 7.7 as corrected by ERRATA F1: Qwen samples the
                             normalized frames truncated to the target length, not the VAE's 17m+5 prefix); the
                             formatting and token ids are Python's and Hugging Face's.
  processor_extra.safetensors  Qwen2VLImageProcessor / Qwen3VLVideoProcessor on inputs that are NOT already aligned
                             (antialiased bicubic down- and up-scaling, mixed axes, odd frame counts padded by
                             repetition), with the pixel limits given in attrs; outputs: grid_thw and the resized uint8
                             frames reconstructed from pixel_values (verified to reproduce them bit for bit).
  canvas.safetensors         canvas preparation with Pillow's LANCZOS exactly as the reference prepares keyframes and
                             reference images (stretch, cover-crop, reference resize), small inputs.
  bf16_diag.safetensors      the seed-0 tiny model's bf16 intermediates (every hooked module of decoder layer 0 and the
                             vision tower) that shared/oracle stores only in fp32, for bf16 rounding diagnosis.
  seed<N>.tar                shared/oracle/make_text_fixtures.py output for other seeds (--seeds), run unchanged.

Usage (GPU box): python3 make_extra_fixtures.py --tokenizer DIR --oracle DIR --out DIR [--seeds 1 2]
         dry run without transformers: python3 make_extra_fixtures.py --dry --out DIR
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback

import numpy as np
import torch

ERRORS = []


def log(*a):
    print(*a, flush=True)


def guarded(name):
    def wrap(fn):
        def run(*a, **k):
            t0 = time.time()
            try:
                r = fn(*a, **k)
                log(f"{name}: ok ({time.time() - t0:.1f} s)")
                return r
            except Exception as exc:  # noqa: BLE001
                ERRORS.append({"where": name, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()})
                log(f"{name}: FAILED {exc!r}\n{traceback.format_exc()}")
                return None
        return run
    return wrap


# Real Qwen3-VL special token ids (H3-ENCODERS-VAES 2.3, 5).
VISION_START, VISION_END, IMAGE_PAD, VIDEO_PAD = 151652, 151653, 151655, 151656
MERGE = 2


# ------------------------------------------------------------------------------------------------------------------
# Tokenizer
# ------------------------------------------------------------------------------------------------------------------
def load_tokenizer(folder, dry):
    if dry:
        return (lambda s: [b + 1000 for b in s.encode()]), "dry-run byte stub"
    try:
        from transformers import AutoTokenizer
        tok = AutoTokenizer.from_pretrained(folder)
        return (lambda s: list(tok(s, add_special_tokens=False)["input_ids"])), f"transformers.AutoTokenizer -> {type(tok).__name__}"
    except Exception as exc:  # noqa: BLE001
        log(f"AutoTokenizer failed ({exc!r}); using tokenizers.Tokenizer")
        from tokenizers import Tokenizer
        tk = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
        return (lambda s: tk.encode(s, add_special_tokens=False).ids), "tokenizers.Tokenizer.from_file(tokenizer.json)"


# ------------------------------------------------------------------------------------------------------------------
# Presentation (spec 5) and reference-video sampling (spec 7.7 + ERRATA F1), restated from the spec
# ------------------------------------------------------------------------------------------------------------------
def sample_video(frames):
    """2 fps samples of `frames` normalized 24 fps frames -> (sample frame indices, blocks [(i1, i2, seconds)])."""
    s = -(-frames // 12)
    if s < 2:
        raise ValueError(f"{frames} frames give {s} sample(s); 2 are needed")
    samples = [12 * i for i in range(s)]
    blocks = []
    for b in range(-(-s // 2)):
        i1, i2 = 2 * b, min(2 * b + 1, s - 1)
        blocks.append((i1, i2, (i1 / 2 + i2 / 2) / 2))
    return samples, blocks


def timestamp_label(seconds):
    return f"<{seconds:.1f} seconds>"


class Presentation:
    def __init__(self, enc):
        self.enc = enc
        self.ids, self.tags, self.segments, self.images, self.videos = [], [], [], [], []

    def text(self, s):
        t = self.enc(s)
        self.segments.append({"text": s, "start": len(self.ids), "ids": t})
        self.ids += t
        self.tags += [1] * len(t)

    def block(self, video, mh, mw):
        pad = VIDEO_PAD if video else IMAGE_PAD
        self.segments.append({"vision": "video" if video else "image", "start": len(self.ids), "merged_grid": [mh, mw]})
        self.ids += [VISION_START] + [pad] * (mh * mw) + [VISION_END]
        self.tags += [0] * (mh * mw + 2)

    def mm_token_type_ids(self):
        return [1 if t == IMAGE_PAD else 2 if t == VIDEO_PAD else 0 for t in self.ids]


def present(enc, case):
    """case: {"task", "prompt", "keyframes": [[mh, mw]...], "references": [{"kind", "grid", "frames", "soundtrack"}]}"""
    p = Presentation(enc)
    if case["task"] == "fl2va":
        for i, g in enumerate(case["keyframes"]):
            p.text(f"<Picture {i + 1}>: ")
            p.block(False, *g)
            p.images.append([1, g[0] * MERGE, g[1] * MERGE])
    elif case["task"] == "ref2va":
        pic = aud = vid = 0
        for r in case["references"]:
            if r["kind"] == "image":
                pic += 1
                p.text(f"<Picture {pic}>: ")
                p.block(False, *r["grid"])
                p.images.append([1, r["grid"][0] * MERGE, r["grid"][1] * MERGE])
            elif r["kind"] == "audio":
                aud += 1
                p.text(f"<Audio {aud}>: ")
            else:
                if r.get("soundtrack"):
                    aud += 1
                    p.text(f"<Audio {aud}>: ")
                vid += 1
                p.text(f"<Video {vid}>: ")
                _, blocks = sample_video(r["frames"])
                for _, _, sec in blocks:
                    p.text(timestamp_label(sec))
                    p.block(True, *r["grid"])
                p.videos.append([len(blocks), r["grid"][0] * MERGE, r["grid"][1] * MERGE])
    p.text(case["prompt"])
    return p


CASES = [
    {"name": "t2va_en", "task": "t2va", "prompt": "A red fox trots through fresh snow at dawn, breath steaming, camera tracking low."},
    {"name": "t2va_spaces", "task": "t2va", "prompt": "  Two spaces before, a tab\tand a newline\nafter. "},
    {"name": "t2va_zh_dialogue", "task": "t2va", "prompt": "一位老人坐在窗边说：<d>[Chinese] 今天的雨下得真大。 </d> 雨声渐渐变小。"},
    {"name": "fl2va_first", "task": "fl2va", "keyframes": [[24, 42]], "prompt": "The scene slowly zooms out."},
    {"name": "fl2va_first_last", "task": "fl2va", "keyframes": [[24, 42], [24, 42]], "prompt": "A smooth transition between the two frames."},
    {"name": "fl2va_last_only", "task": "fl2va", "keyframes": [[3, 5]], "prompt": "Ends on this frame."},
    {"name": "ref2va_image_video_sound", "task": "ref2va", "prompt": "<Picture 1> walks into the room from <Video 1> while <Audio 1> plays.",
     "references": [{"kind": "image", "grid": [4, 3]}, {"kind": "video", "grid": [2, 3], "frames": 56, "soundtrack": True}]},
    {"name": "ref2va_mixed_order", "task": "ref2va", "prompt": "Combine <Video 2>, <Picture 2> and <Audio 2>.",
     "references": [{"kind": "audio"}, {"kind": "video", "grid": [2, 2], "frames": 30, "soundtrack": False},
                    {"kind": "image", "grid": [2, 3]}, {"kind": "video", "grid": [3, 2], "frames": 100, "soundtrack": True},
                    {"kind": "image", "grid": [3, 3]}]},
    {"name": "ref2va_long_video", "task": "ref2va", "prompt": "Continue the motion.",
     "references": [{"kind": "video", "grid": [1, 2], "frames": 362, "soundtrack": True}]},
]


@guarded("presentation")
def make_presentation(enc, tok_name, out, dry):
    get_rope_index = None if dry else hf_rope_index()
    rows = []
    for case in CASES:
        p = present(enc, case)
        entry = {"name": case["name"], "case": case, "ids": p.ids, "tags": p.tags, "segments": p.segments,
                 "mm_token_type_ids": p.mm_token_type_ids(), "image_grid_thw": p.images, "video_grid_thw": p.videos}
        if get_rope_index is not None:
            entry["position_ids"] = get_rope_index(p.ids, p.mm_token_type_ids(), p.images, p.videos)
        rows.append(entry)
    doc = {"generator": os.path.basename(__file__), "tokenizer": tok_name, "versions": versions(),
           "special_ids": {"vision_start": VISION_START, "vision_end": VISION_END, "image_pad": IMAGE_PAD, "video_pad": VIDEO_PAD},
           "rule": "H3-ENCODERS-VAES 5: labels, timestamps and the prompt tokenized separately without special tokens; vision "
                   "blocks <|vision_start|> pads <|vision_end|>; tags 1 text / 0 vision-block rows; position_ids from "
                   "transformers' Qwen3VLModel.get_rope_index (t, h, w rows)",
           "cases": rows}
    with open(os.path.join(out, "presentation.json"), "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)


def hf_rope_index():
    """transformers' Qwen3VLModel.get_rope_index on a minimal model carrying the released special ids."""
    from transformers import Qwen3VLConfig, Qwen3VLModel
    cfg = Qwen3VLConfig(
        text_config={"hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1,
                     "head_dim": 8, "intermediate_size": 32, "vocab_size": 151936, "rope_theta": 5000000,
                     "rope_scaling": {"rope_type": "default", "mrope_section": [2, 1, 1], "mrope_interleaved": True}},
        vision_config={"depth": 1, "hidden_size": 16, "num_heads": 2, "intermediate_size": 32, "out_hidden_size": 16,
                       "deepstack_visual_indexes": [0], "patch_size": 16, "spatial_merge_size": MERGE, "temporal_patch_size": 2},
        image_token_id=IMAGE_PAD, video_token_id=VIDEO_PAD, vision_start_token_id=VISION_START, vision_end_token_id=VISION_END)
    model = Qwen3VLModel(cfg).eval()

    def run(ids, mm, images, videos):
        ids_t = torch.tensor([ids])
        kw = {"input_ids": ids_t, "mm_token_type_ids": torch.tensor([mm]), "attention_mask": torch.ones_like(ids_t),
              "image_grid_thw": torch.tensor(images) if images else None, "video_grid_thw": torch.tensor(videos) if videos else None}
        with torch.no_grad():
            pos = model.get_rope_index(**kw)
        pos = pos[0] if isinstance(pos, (tuple, list)) else pos
        return pos[:, 0].long().tolist()
    return run


@guarded("sampling")
def make_sampling(enc, tok_name, out):
    rows = []
    for frames in list(range(13, 61)) + [73, 100, 107, 124, 131, 175, 200, 243, 255, 289, 300, 362]:
        samples, blocks = sample_video(frames)
        rows.append({"frames": frames, "samples": samples,
                     "blocks": [{"first": 12 * i1, "second": 12 * i2, "seconds": sec, "label": timestamp_label(sec),
                                 "label_ids": enc(timestamp_label(sec))} for i1, i2, sec in blocks]})
    # ERRATA F1: Qwen sees the frames truncated to the target count, the VAE the 17m+5 prefix of those.
    f1 = []
    for ref, target in [(100, 124), (56, 56), (200, 107), (30, 22), (13, 39)]:
        qwen = min(ref, target)
        vae = max(1, (qwen - 5) // 17) * 17 + 5
        f1.append({"reference_frames": ref, "target_frames": target, "qwen_frames": qwen,
                   "qwen_blocks": len(sample_video(qwen)[1]), "vae_frames": min(vae, qwen)})
    doc = {"generator": os.path.basename(__file__), "tokenizer": tok_name, "versions": versions(),
           "rule": "samples every 12th 24 fps frame (2 fps), sample i at i/2 s; an odd count repeats the last sample; block b pairs "
                   "samples 2b and min(2b+1, S-1), timestamp their mean time, label '<%.1f seconds>' (Python formatting)",
           "videos": rows, "errata_f1": f1}
    with open(os.path.join(out, "sampling.json"), "w") as f:
        json.dump(doc, f, indent=1)


def versions():
    v = {"torch": torch.__version__, "numpy": np.__version__, "python": sys.version.split()[0]}
    for m in ("transformers", "torchvision", "PIL", "tokenizers"):
        try:
            v[m] = __import__(m).__version__
        except Exception:  # noqa: BLE001
            pass
    return v


# ------------------------------------------------------------------------------------------------------------------
# Processors on unaligned inputs
# ------------------------------------------------------------------------------------------------------------------
def frames_u8(seed, t, h, w):
    g = torch.Generator().manual_seed(seed)
    yy = torch.arange(h, dtype=torch.float64)[:, None]
    xx = torch.arange(w, dtype=torch.float64)[None, :]
    out = []
    for f in range(t):
        ch = [128 + 90 * torch.sin(6.2832 * ((1 + c) * xx / w + (2 - c) * yy / h) + 0.7 * f + c) for c in range(3)]
        out.append(torch.stack(ch, -1))
    img = torch.stack(out) + 18 * torch.randn(t, h, w, 3, generator=g, dtype=torch.float64)
    return img.round().clamp(0, 255).to(torch.uint8).numpy()


def unpatchify(pv, grid, patch=16, temporal=2):
    """pixel_values (N, 3*T*P*P) in merge-block order -> uint8 frames (grid_t*temporal, H, W, 3) via (x*127.5+127.5)."""
    gt, gh, gw = grid
    r = (pv.double() * 127.5 + 127.5).round()
    assert r.min() >= 0 and r.max() <= 255
    x = r.to(torch.uint8).reshape(gt, gh // MERGE, gw // MERGE, MERGE, MERGE, 3, temporal, patch, patch)
    x = x.permute(0, 6, 1, 3, 7, 2, 4, 8, 5)  # gt, t, bh, ih, y, bw, iw, x, c
    return x.reshape(gt * temporal, gh * patch, gw * patch, 3).contiguous()


def repatchify(frames, patch=16, temporal=2):
    x = (torch.from_numpy(np.ascontiguousarray(frames)).permute(0, 3, 1, 2).float() - 127.5) / 127.5
    t, c, h, w = x.shape
    gt, gh, gw = t // temporal, h // patch, w // patch
    x = x.reshape(gt, temporal, c, gh // MERGE, MERGE, patch, gw // MERGE, MERGE, patch).permute(0, 3, 6, 4, 7, 2, 1, 5, 8)
    return x.reshape(gt * gh * gw, c * temporal * patch * patch)


PROC_CASES = [
    # name, kind, frames (T, H, W), limits (min, max pixels)
    ("img_down", "image", (1, 100, 180), (1024, 8192)),
    ("img_mixed", "image", (1, 50, 300), (4096, 65536)),
    ("img_up_odd", "image", (1, 45, 77), (65536, 16777216)),
    ("vid_down", "video", (4, 96, 128), (4096, 4 * 64 * 96)),
    ("vid_odd", "video", (3, 64, 96), (4096, 25165824)),
    ("vid_mixed", "video", (2, 40, 56), (4096, 25165824)),
    ("vid_long_down", "video", (10, 72, 136), (4096, 10 * 32 * 64)),
]


@guarded("processor_extra")
def make_processor_extra(out, te_dir):
    from PIL import Image
    from transformers import AutoImageProcessor, AutoVideoProcessor
    ip = AutoImageProcessor.from_pretrained(te_dir)
    vp = AutoVideoProcessor.from_pretrained(te_dir)
    tensors, attrs = {}, {"image_processor": type(ip).__name__, "video_processor": type(vp).__name__, "versions": versions(), "cases": {}}
    for i, (name, kind, (t, h, w), (mn, mx)) in enumerate(PROC_CASES):
        u8 = frames_u8(100 + i, t, h, w)
        size = {"shortest_edge": mn, "longest_edge": mx}
        if kind == "image":
            r = ip(images=[Image.fromarray(u8[0])], size=size, return_tensors="pt")
            pv, grid = r["pixel_values"].float(), r["image_grid_thw"][0].tolist()
        else:
            r = vp(videos=[u8], size=size, do_sample_frames=False, return_tensors="pt")
            pv, grid = r["pixel_values_videos"].float(), r["video_grid_thw"][0].tolist()
        frames = unpatchify(pv, grid)
        exact = bool(torch.equal(repatchify(frames.numpy()), pv))
        if kind == "image":
            frames = frames[:1]
        tensors[f"in.{name}"] = torch.from_numpy(u8)
        tensors[f"out.{name}.grid_thw"] = torch.tensor(grid, dtype=torch.int64)
        tensors[f"out.{name}.resized_u8"] = frames
        attrs["cases"][name] = {"kind": kind, "min_pixels": mn, "max_pixels": mx, "pixel_values_reproduced_exactly": exact,
                                "note": "video resized_u8 holds the padded frames (grid_t*2)" if kind == "video" else ""}
        if not exact:
            tensors[f"out.{name}.pixel_values"] = pv
    save(tensors, os.path.join(out, "processor_extra.safetensors"), attrs, "processor_extra")


def save(tensors, path, attrs, family):
    sys.path.insert(0, ARGS.oracle) if ARGS.oracle else None
    try:
        from safetensors.torch import save_file
    except Exception:  # noqa: BLE001
        import h3_st
        save_file = h3_st.save_file
    save_file({k: v.contiguous() for k, v in tensors.items()}, path,
              metadata={"h3_fixture": family, "attrs": json.dumps(attrs, sort_keys=True)})


# ------------------------------------------------------------------------------------------------------------------
# Canvas preparation with Pillow LANCZOS (reference: upstream diffusers MiniMax-H3 preparation, spec 10.2-10.3)
# ------------------------------------------------------------------------------------------------------------------
@guarded("canvas")
def make_canvas(out):
    from PIL import Image
    tensors, cases = {}, {}

    def pil(u8):
        return Image.fromarray(u8)

    def add(name, src, res, how):
        tensors[f"in.{name}"] = torch.from_numpy(src)
        tensors[f"out.{name}"] = torch.from_numpy(np.asarray(res).copy())
        cases[name] = how

    # first keyframe: stretched to the canvas
    src = frames_u8(200, 1, 61, 97)[0]
    add("stretch_97x61_to_128x96", src, pil(src).resize((128, 96), Image.LANCZOS), {"op": "stretch", "w": 128, "h": 96})
    src = frames_u8(201, 1, 130, 70)[0]
    add("stretch_70x130_to_64x96", src, pil(src).resize((64, 96), Image.LANCZOS), {"op": "stretch", "w": 64, "h": 96})
    # last keyframe: cover-crop
    for k, (sw, sh, W, H) in enumerate([(61, 97, 128, 96), (200, 90, 96, 64), (96, 64, 96, 64)]):
        src = frames_u8(210 + k, 1, sh, sw)[0]
        if (sw, sh) == (W, H):
            res = pil(src)
        else:
            s = max(W / sw, H / sh)
            rw, rh = max(W, round(sw * s)), max(H, round(sh * s))
            r = pil(src).resize((rw, rh), Image.LANCZOS)
            left, top = (rw - W) // 2, (rh - H) // 2
            res = r.crop((left, top, left + W, top + H))
        add(f"cover_{sw}x{sh}_to_{W}x{H}", src, res, {"op": "cover", "w": W, "h": H})
    # reference image resize (aspect kept, each side rounded to a multiple of 32, LANCZOS)
    for k, (sw, sh, scale) in enumerate([(150, 90, 0.9), (75, 120, 1.7)]):
        src = frames_u8(220 + k, 1, sh, sw)[0]
        w, h = max(32, round(sw * scale / 32) * 32), max(32, round(sh * scale / 32) * 32)
        add(f"refimage_{sw}x{sh}_to_{w}x{h}", src, pil(src).resize((w, h), Image.LANCZOS), {"op": "resize", "w": w, "h": h})
    save(tensors, os.path.join(out, "canvas.safetensors"), {"versions": versions(), "cases": cases,
                                                             "filter": "PIL.Image.LANCZOS"}, "canvas")


def tiny_bf16_model(mtf, transformers, te, log):
    """The oracle's seed-0 tiny text encoder written to the folder te, as make_text_fixtures.py runs it: its cases,
    the processors' inputs for its keyframe and reference video, and the model loaded in bf16 on the CPU."""
    cfg = mtf.text_encoder_config()
    mtf.write_text_encoder(te, cfg, mtf.make_weights(cfg, 0))
    cases = mtf.build_cases(0)
    image_u8 = mtf.make_frames(0, "fl2va_canvas", 1, *mtf.IMAGE_HW)[0]
    video_u8 = mtf.make_frames(0, "reference_video", mtf.VIDEO_T, *mtf.VIDEO_HW)
    procs, _ = mtf.load_processors(transformers, te, log)
    inputs = mtf.run_processors(procs, image_u8, video_u8)
    model, _ = mtf.load_hf_model(transformers, te, torch.bfloat16, torch.device("cpu"))
    return cases, inputs, model


# ------------------------------------------------------------------------------------------------------------------
# bf16 intermediates of the seed-0 tiny model (shared/oracle keeps these in fp32 only)
# ------------------------------------------------------------------------------------------------------------------
@guarded("bf16_diag")
def make_bf16_diag(out, tmp):
    sys.path.insert(0, ARGS.oracle)
    import make_text_fixtures as mtf
    import transformers
    te = os.path.join(tmp, "text_encoder")
    cases, inputs, model = tiny_bf16_model(mtf, transformers, te, log)
    tensors = {}
    for name in ("t2va", "fl2va"):
        caps, _ = mtf.hf_forward(model, cases[name], inputs, torch.device("cpu"), log)
        for key, vals in caps.items():
            if key.startswith(("lm.layer0.", "vis.")) or key in ("lm.layer0.out", "lm.layer1.in"):
                v = vals[0]
                if isinstance(v, torch.Tensor) and v.is_floating_point():
                    v = v[0] if v.dim() > 2 and v.shape[0] == 1 else v
                    tensors[f"{name}.{key}"] = v.to(torch.bfloat16)
    save(tensors, os.path.join(out, "bf16_diag.safetensors"), {"versions": versions(),
         "note": "bf16 model (dtype=torch.bfloat16) on CPU, seed-0 tiny weights; forward hooks as make_text_fixtures.py"}, "bf16_diag")
    return te


@guarded("seeds")
def make_seeds(out, seeds):
    for s in seeds:
        d = tempfile.mkdtemp(prefix=f"seed{s}-")
        r = subprocess.run([sys.executable, os.path.join(ARGS.oracle, "make_text_fixtures.py"), "--out", d, "--seed", str(s), "--no-cuda-extra"],
                           capture_output=True, text=True)
        log(r.stdout[-3000:], r.stderr[-3000:])
        if r.returncode != 0:
            raise RuntimeError(f"seed {s}: make_text_fixtures.py exited {r.returncode}")
        with tarfile.open(os.path.join(out, f"seed{s}.tar"), "w") as tf:
            for sub in ("text_encoder", "fixtures", "manifest.json"):
                tf.add(os.path.join(d, sub), arcname=f"seed{s}/text/{sub}")


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tokenizer", help="folder with tokenizer.json and tokenizer_config.json (the real Qwen3 vocabulary)")
    ap.add_argument("--oracle", help="folder with shared/oracle's make_text_fixtures.py and h3_st.py")
    ap.add_argument("--seeds", type=int, nargs="*", default=[])
    ap.add_argument("--dry", action="store_true", help="no transformers: byte-stub tokenizer, no HF positions/processors")
    ARGS = ap.parse_args()
    os.makedirs(ARGS.out, exist_ok=True)
    log(json.dumps(versions()))
    enc, tok_name = load_tokenizer(ARGS.tokenizer, ARGS.dry)
    make_presentation(enc, tok_name, ARGS.out, ARGS.dry)
    make_sampling(enc, tok_name, ARGS.out)
    make_canvas(ARGS.out)
    if not ARGS.dry:
        tmp = tempfile.mkdtemp()
        te = make_bf16_diag(ARGS.out, tmp)
        if te:
            make_processor_extra(ARGS.out, te)
        make_seeds(ARGS.out, ARGS.seeds)
    if ERRORS:
        with open(os.path.join(ARGS.out, "errors.json"), "w") as f:
            json.dump(ERRORS, f, indent=1)
    log("DONE with", len(ERRORS), "errors")
    return 1 if ERRORS else 0


ARGS = None
if __name__ == "__main__":
    sys.exit(main())
