"""Reference fixtures at the released size, from a `h3studio testmodel --size released` snapshot.

Runs the official implementation (diffusers' MiniMax-H3 modules, vendored verbatim, through the project's oracle
bootstrap: ../shared/oracle, copied beside this file by prepare.sh) on the snapshot's own weights, converted
from the original layout in memory by the official converter's per-key functions, and writes fixtures in the
`h3studio fixture` format (../shared/oracle/FIXTURES.md): the DiT families (dit_t2va, dit_fl2va, dit_ref2va;
float32 and the released mixed precision) at the released geometries, the video VAE decode of one 512² window
and encode of one picture, the audio VAE decode and encode of 0.92 s, and the Qwen3-VL text encoder with its vision
tower on one picture, a video and both (text_fl2va, text_video, text_ref2va, through the text-side oracle
make_text_fixtures.py and transformers).

    python3 reference.py --snapshot SNAP --out FIXDIR [--device cuda] [--families dit,vae,audio,text] [--canvas 512x512x22]

GPU results are exact float32: TF32 is off for matmuls and convolutions.
"""
import argparse
import contextlib
import json
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "oracle"))

import make_fixtures as mf  # noqa: E402  (bootstraps the vendored diffusers)
import torch  # noqa: E402

from diffusers.models import AutoencoderKLMiniMaxH3, AutoencoderKLMiniMaxH3Audio, MiniMaxH3Transformer3DModel  # noqa: E402
from diffusers.modular_pipelines.minimax_h3 import before_denoise  # noqa: E402
from diffusers.modular_pipelines.minimax_h3.modular_pipeline import audio_latent_num_frames, video_latent_num_frames  # noqa: E402
from diffusers.modular_pipelines.minimax_h3.references import LayoutReference  # noqa: E402

CONV = mf.CONV
try:
    from safetensors.torch import load_file
except ImportError:  # the oracle's dependency-free reader
    load_file = mf.h3_st.load_file


def load_original(folder):
    """Every tensor of a (sharded) original-layout safetensors folder."""
    index = os.path.join(folder, "model.safetensors.index.json")
    files = sorted(set(json.load(open(index))["weight_map"].values())) if os.path.isfile(index) else ["model.safetensors"]
    state = {}
    for f in files:
        state.update(load_file(os.path.join(folder, f)))
    return state


# transformer/config.json (original spelling) -> MiniMaxH3Transformer3DModel arguments, as the official converter
# names them (MINIMAX_H3_TRANSFORMER_CONFIG's comments).
ORIGINAL_TO_DIFFUSERS = {
    "hidden_size": "hidden_size", "num_layers": "num_layers", "token_refiner_num_layers": "num_refiner_layers",
    "num_attention_heads": "num_attention_heads", "attention_head_dim": "attention_head_dim", "ffn_hidden_size": "ffn_dim",
    "latents_dim": "in_channels", "audio_latents_dim": "audio_in_channels", "patch_size": "patch_size", "text_dim": "text_dim",
    "timestep_input_dim": "freq_dim", "time_embed_hidden_size": "time_embed_hidden_dim", "time_embed_dim": "time_embed_dim",
    "rope_inv_freq_len": "rope_freq_dim", "norm_eps": "norm_eps", "qk_norm_eps": "qk_norm_eps", "final_norm_eps": "final_norm_eps",
}


def transformer_config(snapshot, partition):
    """The diffusers config of the snapshot's transformer, read from its original config.json."""
    orig = json.load(open(os.path.join(snapshot, partition, "transformer", "config.json")))
    cfg = dict(CONV.MINIMAX_H3_TRANSFORMER_CONFIG)  # rope_theta, which the original config does not spell
    cfg.update({d: orig[o] for o, d in ORIGINAL_TO_DIFFUSERS.items()})
    return cfg


def built_on(device):
    """Construct modules directly on device where torch can (>= 2.0), else on the CPU."""
    dev = torch.device(device)
    return dev if hasattr(dev, "__enter__") else contextlib.nullcontext()


def load_transformer(snapshot, partition, device):
    """(float32 model, mixed-precision model) of a partition's transformer, converted key by key as the official
    converter's shard streamer does: per-head interleaved QKV reordered, then split; fc1 halves swapped."""
    cfg = transformer_config(snapshot, partition)
    orig = load_original(os.path.join(snapshot, partition, "transformer"))
    state = {}
    for key in list(orig):
        t = orig.pop(key)
        if key.endswith(".attn.qkv_proj.weight"):
            t = CONV.reorder_interleaved_qkv(t, cfg["num_attention_heads"], cfg["attention_head_dim"])
        for k, v in CONV.convert_transformer_key(key, t, cfg):
            state[k] = v
    with built_on(device):
        f32 = MiniMaxH3Transformer3DModel(**cfg)
    f32.load_state_dict({k: v.float() for k, v in state.items()}, strict=True)
    f32 = f32.to(device).eval()
    with built_on(device):
        mixed = MiniMaxH3Transformer3DModel(**cfg)
    mixed = mf.to_mixed_precision(mixed, state).to(device)
    del state
    return cfg, f32, mixed


class BlockStore:
    """The transformer blocks of a partition read from the snapshot one block at a time, converted key by key as
    load_transformer does (QKV reordered and split, fc1 halves swapped), in their stored dtypes, on the device.
    With cache=True each block's converted tensors stay on the device after their first read (the mixed-precision
    forward after the float32 one then reads nothing again: 62 GiB of BF16 blocks fit the H200 beside one float32
    block); else every use reads the block again."""

    def __init__(self, folder, cfg, device, cache):
        index = os.path.join(folder, "model.safetensors.index.json")
        if os.path.isfile(index):
            wmap = json.load(open(index))["weight_map"]
        else:
            wmap = {k: "model.safetensors" for k in mf.h3_st.load_file(os.path.join(folder, "model.safetensors"))}
        self.folder, self.cfg, self.device, self.cache = folder, cfg, device, cache
        self.keys = {}  # block index -> [(original key, shard)]
        self.rest = []  # everything outside the block stack
        for key, shard in sorted(wmap.items()):
            if key.startswith("blocks."):
                self.keys.setdefault(int(key.split(".")[1]), []).append((key, shard))
            else:
                self.rest.append((key, shard))
        if sorted(self.keys) != list(range(cfg["num_layers"])):
            raise SystemExit(f"reference: {folder} holds blocks {sorted(self.keys)[:3]}..., the config {cfg['num_layers']}")
        self.handles, self.cached, self.read_s, self.read_bytes = {}, {}, 0.0, 0

    def _tensor(self, key, shard):
        try:
            from safetensors import safe_open
        except ImportError:  # the dependency-free reader loads a whole shard: fine at small sizes only
            if shard not in self.handles:
                self.handles[shard] = mf.h3_st.load_file(os.path.join(self.folder, shard))
            return self.handles[shard][key]
        if shard not in self.handles:
            self.handles[shard] = safe_open(os.path.join(self.folder, shard), framework="pt", device="cpu")
        return self.handles[shard].get_tensor(key)

    def _convert(self, pairs, strip):
        out = {}
        for key, shard in pairs:
            t = self._tensor(key, shard).to(self.device)
            self.read_bytes += t.numel() * t.element_size()
            if key.endswith(".attn.qkv_proj.weight"):
                t = CONV.reorder_interleaved_qkv(t, self.cfg["num_attention_heads"], self.cfg["attention_head_dim"])
            for k, v in CONV.convert_transformer_key(key, t, self.cfg):
                out[k[len(strip):]] = v
        return out

    def rest_state(self):
        return self._convert(self.rest, "")

    def block(self, i):
        """Block i's diffusers state dict (keys relative to transformer_blocks.i), stored dtypes, on the device."""
        if i in self.cached:
            return self.cached[i]
        t0 = time.time()
        state = self._convert(self.keys[i], f"transformer_blocks.{i}.")
        torch.cuda.synchronize() if str(self.device).startswith("cuda") else None
        self.read_s += time.time() - t0
        if self.cache:
            self.cached[i] = state
        return state


def streamed_transformer(store, cfg, device, rest, mixed):
    """A MiniMaxH3Transformer3DModel whose blocks live on the meta device: a forward pre-hook on each block loads
    its weights from store (float32, or the released mixed precision's dtypes: from_pretrained(torch_dtype=bfloat16)
    keeps _keep_in_fp32_modules in float32, every other weight BF16, as mf.to_mixed_precision does), a forward hook
    frees them again. The rest of the model (embedders, token refiner, time MLP, heads) is resident."""
    with built_on(device):
        model = MiniMaxH3Transformer3DModel(**dict(cfg, num_layers=0))
    if mixed:
        model = mf.to_mixed_precision(model, rest)
    else:
        model.load_state_dict({k: v.float() for k, v in rest.items()}, strict=True)
    model = model.to(device).eval()
    keep = model._keep_in_fp32_modules or []
    block_cls = sys.modules[MiniMaxH3Transformer3DModel.__module__].MiniMaxH3TransformerBlock
    with torch.device("meta"):
        blocks = [block_cls(hidden_size=cfg["hidden_size"], num_attention_heads=cfg["num_attention_heads"],
                            attention_head_dim=cfg["attention_head_dim"], ffn_dim=cfg["ffn_dim"],
                            time_embed_dim=cfg["time_embed_dim"], norm_eps=cfg["norm_eps"], qk_norm_eps=cfg["qk_norm_eps"])
                  for _ in range(cfg["num_layers"])]
    model.transformer_blocks = torch.nn.ModuleList(blocks)

    def dtype_of(i, name, t):
        if not t.is_floating_point():
            return t
        if not mixed:
            return t.float()
        full = f"transformer_blocks.{i}.{name}"
        return t.float() if any(m in full for m in keep) else t.float().to(torch.bfloat16)

    def load(i):
        def pre(block, args, kwargs=None):
            state = {k: dtype_of(i, k, v) for k, v in store.block(i).items()}
            block.load_state_dict(state, strict=True, assign=True)
        return pre

    def free(block, args, out):
        block.to_empty(device="meta")

    for i, blk in enumerate(model.transformer_blocks):
        blk.register_forward_pre_hook(load(i))
        blk.register_forward_hook(free)
    return model


def load_streamed(snapshot, partition, device, cache):
    cfg = transformer_config(snapshot, partition)
    store = BlockStore(os.path.join(snapshot, partition, "transformer"), cfg, device, cache)
    rest = store.rest_state()
    f32 = streamed_transformer(store, cfg, device, rest, mixed=False)
    mixed = streamed_transformer(store, cfg, device, rest, mixed=True)
    del rest
    return cfg, f32, mixed, store


def released_layouts(num_frames, latent_h, latent_w, text_rows):
    """t2va / fl2va (both keyframes) / ref2va (two images) packed layouts at a released geometry."""
    patch = (1, 2, 2)
    F = video_latent_num_frames(num_frames, 17, 5)
    A = audio_latent_num_frames(num_frames)
    out = {}
    # A picture block in the prompt: the vision rows of a 256² picture stand-in (8 rows) per keyframe/reference.
    for name, vision, anchors in (("t2va", (), ()), ("fl2va", tuple(range(2, 10)) + tuple(range(12, 20)), ("first", "last"))):
        tags = mf.text_tags(text_rows, vision)
        res = before_denoise.MiniMaxH3PrepareLayoutStep.build_packed_sequence(tags, F, latent_h, latent_w, A, patch, 2, 2, 0, anchors)
        out[name] = dict(zip(("position_ids", "token_tags", "video_indices", "audio_indices", "text_indices",
                              "num_condition_video_rows", "num_condition_audio_rows"), res))
        out[name].update(text_token_tags=tags, anchors=list(anchors), num_latent_frames=F, num_audio_latents=A)
    tags = mf.text_tags(text_rows, tuple(range(2, 10)) + tuple(range(12, 20)))
    refs = [LayoutReference("image"), LayoutReference("image")]
    cond = [torch.zeros(1, 24, 1, latent_h, latent_w), torch.zeros(1, 24, 1, latent_h, latent_w)]
    res = before_denoise.MiniMaxH3Ref2VAPrepareLayoutStep.build_ref2va_packed_sequence(
        tags, refs, cond, [], F, latent_h, latent_w, A, patch, 2, 2, 0)
    out["ref2va"] = dict(zip(("position_ids", "token_tags", "video_indices", "audio_indices", "text_indices",
                              "num_condition_video_rows", "num_condition_audio_rows"), res))
    out["ref2va"].update(text_token_tags=tags, num_latent_frames=F, num_audio_latents=A,
                         references=[{"kind": "image", "latent_shape": [1, latent_h, latent_w]}] * 2)
    return out


def exact_reference(module, fn, args):
    """fn(module) in float32 on the GPU and in float64: returns (float64 result as float32, rel-L2 of the float32
    run against it). A long float32 convolution chain differs from exact arithmetic by more than 1e-5 on any
    implementation (cuDNN's included), so the float64 run of the same official code is the reference."""
    out32 = fn(module)
    module.double()
    out64 = fn(module)
    module.float()
    rel = float((out32.double() - out64).norm() / (out64.norm() or 1.0))
    return out64.float(), rel


def write(fx, outdir, manifest, suffix):
    """The oracle's Fixture.write, with the family in __metadata__ (h3_fixture) so the file can carry a suffix."""
    name = fx.name + suffix + ".safetensors"
    path = os.path.join(outdir, name)
    mf.h3_st.save_file(fx.tensors, path, metadata={"attrs": json.dumps(fx.attrs, sort_keys=True), "h3_fixture": fx.name})
    manifest["files"][name] = {"description": fx.description, "attrs": fx.attrs, "bytes": os.path.getsize(path), "tensors": fx.entries}
    print(f"  wrote {name}: {os.path.getsize(path) / 1e6:.0f} MB", flush=True)


def dit_fixtures(args, manifest):
    w, h, frames = (int(x) for x in args.canvas.split("x"))
    lays = released_layouts(frames, h // 16, w // 16, args.text_rows)
    timings = {}
    for partition, names in (("FL2VA", ("t2va", "fl2va")), ("Ref2VA", ("ref2va",))):
        names = [n for n in names if n in args.tasks]
        if not names:
            continue
        t0 = time.time()
        cfg = transformer_config(args.snapshot, partition)
        stream = args.stream == "on" or (args.stream == "auto" and cfg["num_layers"] > 8)
        store = None
        if stream:
            folder = os.path.join(args.snapshot, partition, "transformer")
            size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder) if f.endswith(".safetensors"))
            cache = args.device.startswith("cuda") and torch.cuda.mem_get_info()[0] > size + (24 << 30)
            cfg, f32, mixed, store = load_streamed(args.snapshot, partition, args.device, cache)
            print(f"  {partition}: {cfg['num_layers']} blocks streamed from {folder} ({size / 2**30:.1f} GiB; "
                  f"{'kept on the device after the first read' if cache else 'read again for each precision'})", flush=True)
        else:
            cfg, f32, mixed = load_transformer(args.snapshot, partition, args.device)
        mf.TINY_DIT = cfg  # the oracle's builders read the transformer config from here
        timings[f"load_{partition}_s"] = round(time.time() - t0, 1)
        for name in names:
            t0 = time.time()
            fx = mf.dit_fixture(name, f32, mixed, lays[name], args.seed, args.device,
                                {"weights": "transformer/" if partition == "FL2VA" else "transformer_ref/",
                                 "rows": int(lays[name]["token_tags"].numel()), "canvas": args.canvas})
            torch.cuda.synchronize() if args.device.startswith("cuda") else None
            timings[f"dit_{name}_s"] = round(time.time() - t0, 2)
            rows = int(lays[name]["token_tags"].numel())
            print(f"  dit_{name}: {rows} rows, {cfg['num_layers']} blocks, {timings[f'dit_{name}_s']} s (both precisions)", flush=True)
            if store is not None:
                print(f"    checkpoint read so far: {store.read_bytes / 2**30:.1f} GiB; block reads took {store.read_s:.1f} s", flush=True)
            write(fx, args.out, manifest, f"_{w}x{h}x{frames}")
        if store is not None:
            timings[f"block_reads_{partition}_s"] = round(store.read_s, 1)
        del f32, mixed, store
        torch.cuda.empty_cache() if args.device.startswith("cuda") else None
    return timings


def video_vae_config(partition_dir):
    """AutoencoderKLMiniMaxH3 arguments from the snapshot's video_vae/config.json and source/config.json, named as
    the official converter's MINIMAX_H3_VIDEO_VAE_CONFIG comments map them."""
    wrapper = json.load(open(os.path.join(partition_dir, "video_vae", "config.json")))
    src = json.load(open(os.path.join(partition_dir, "video_vae", "source", "config.json")))
    vit = src.get("vit_decoder_kwargs", {})
    cfg = dict(CONV.MINIMAX_H3_VIDEO_VAE_CONFIG)  # the fixed knobs (norm groups, eps, register tokens, ffn mult)
    cfg.update(in_channels=src["in_channels"], out_channels=src["out_ch"], latent_channels=src["z_channels"],
               block_out_channels=[src["ch"] * m for m in src["ch_mult"]], layers_per_block=src["num_res_blocks"],
               spatial_downsample_factors=src["space_down"], temporal_downsample_factors=src["time_down"],
               spatial_padding_mode=src["padding_mode"], decoder_num_layers=vit["num_layers"],
               decoder_num_attention_heads=vit["heads"], decoder_attention_head_dim=vit["dim_head"],
               decoder_rope_theta=vit["rope_theta"], decoder_rope_dim_ratio=vit["rope_dim_ratio"],
               clip_length=wrapper["vae_clip_length"], token_drop=wrapper["vae_token_drop"])
    return cfg


def vae_fixture(args, manifest):
    """Decode of one 512² latent window (7 latent frames = 22 pixel frames) with the default tiling, and the
    encode of one 512² picture."""
    snap = os.path.join(args.snapshot, "FL2VA")
    scratch = os.path.join(args.out, "_vae_diffusers")
    t0 = time.time()
    cfg = video_vae_config(snap)
    CONV.convert_video_vae(snap, scratch, cfg, mf.DIFFUSERS_VERSION, 4 << 30)
    vae, _, state = mf.load_diffusers_folder(AutoencoderKLMiniMaxH3, scratch)
    vae.load_state_dict(state, strict=True)
    vae = vae.to(args.device).eval()
    del state
    shutil.rmtree(scratch)
    load_s = time.time() - t0
    fx = mf.Fixture("video_vae", "AutoencoderKLMiniMaxH3 at the released size: decode of one 512x512 window and encode of one picture, float32.")
    fx.attrs.update(config=cfg, spatial_compression_ratio=vae.spatial_compression_ratio,
                    temporal_compression_ratio=vae.temporal_compression_ratio)
    gen = mf._generator(args.seed, "video_vae/released")
    t0 = time.time()
    notes = {}
    with torch.no_grad():
        lh, lw = args.vae_size // 16, args.vae_size // 16
        z = torch.randn(1, 24, args.vae_latent_frames, lh, lw, generator=gen)
        img = torch.randn(1, 3, 1, args.vae_size, args.vae_size, generator=gen)
        d = lambda m, x: x.to(args.device, next(m.parameters()).dtype)  # noqa: E731
        fx.add("decode.z", z, f"(1, 24, {args.vae_latent_frames}, {lh}, {lw}) latent video at {args.vae_size}x{args.vae_size}")
        fx.add("encode_image.video", img, f"one {args.vae_size}x{args.vae_size} picture")
        for key, fn, desc in (
                ("decode.video", lambda m: m.decode(d(m, z), return_dict=False)[0], "decode(z), default tiling (256 px tiles, 64 px overlaps)"),
                ("encode_image.moments", lambda m: m.encode(d(m, img), return_dict=False)[0].parameters, "single-frame encode moments")):
            if args.f64:
                ref, rel = exact_reference(vae, fn, None)
                notes[key] = rel
                desc += "; float64 run of the official code (its float32 GPU run differs by rel-L2 %.3g)" % rel
            else:
                ref = fn(vae)
            fx.add(key, ref, desc)
    fx.attrs["float32_gpu_rel_l2_vs_float64"] = notes
    print(f"  video_vae: official float32 on the GPU vs float64: {notes}", flush=True)
    torch.cuda.synchronize() if args.device.startswith("cuda") else None
    print(f"  video_vae: load {load_s:.1f} s, decode+encode {time.time() - t0:.1f} s", flush=True)
    write(fx, args.out, manifest, "_released")
    return {"video_vae_load_s": round(load_s, 1), "video_vae_s": round(time.time() - t0, 1)}


def encoder_stages(avae, wav, device):
    """The audio encoder's error growth, stage by stage (conv_in, each encoder block, conv_out) of the official
    code: the stream's rms, the float64 run's response to a 1e-7 relative perturbation of the input, and the
    official float32 run's departure, both as rel-L2 against the float64 run on the same input."""
    blocks = avae.encoder.block
    keep = [0] + list(range(1, len(blocks) - 2)) + [len(blocks) - 1]
    names = ["conv_in"] + [f"block {i}" for i in keep[1:-1]] + ["conv_out"]

    def run(x):
        outs, h = [], x
        for i, m in enumerate(blocks):
            h = m(h)
            if i in keep:
                outs.append(h.double())
        return outs
    gen = torch.Generator().manual_seed(1)
    noise = torch.randn(wav.shape, generator=gen, dtype=torch.float64)
    avae.double()
    x64 = wav.to(device, torch.float64)
    ref, pert = run(x64), run(x64 * (1 + 1e-7 * noise.to(device)))
    avae.float()
    f32 = run(wav.to(device, torch.float32))
    rel = lambda a, b: float((a - b).norm() / b.norm())  # noqa: E731
    rows, prev = [], None
    for n, r, p, f in zip(names, ref, pert, f32):
        e = rel(p, r)
        rows.append({"stage": n, "rms": float(r.pow(2).mean().sqrt()), "perturbation_1e-7": e,
                     "growth": None if prev is None else e / prev, "float32": rel(f, r)})
        prev = e
        print(f"    encoder {n:9} rms {rows[-1]['rms']:9.3g}  1e-7 perturbation -> {e:9.3g}"
              f"{'' if rows[-1]['growth'] is None else ' (x%.2f)' % rows[-1]['growth']:9}  official float32 {rows[-1]['float32']:9.3g}", flush=True)
    return rows


def audio_fixture(args, manifest):
    snap = os.path.join(args.snapshot, "FL2VA")
    scratch = os.path.join(args.out, "_audio_diffusers")
    CONV.convert_audio_vae(snap, scratch, mf.DIFFUSERS_VERSION)
    avae, _, state = mf.load_diffusers_folder(AutoencoderKLMiniMaxH3Audio, scratch)
    avae.load_state_dict(state, strict=True)
    avae = avae.to(args.device).eval()
    shutil.rmtree(scratch)
    fx = mf.Fixture("audio_vae", "AutoencoderKLMiniMaxH3Audio at the released size: decode and encode of 0.92 s, float32.")
    fx.attrs.update(config={k: v for k, v in avae.config.items() if k not in ("latents_mean", "latents_std")}, hop_length=avae.hop_length)
    gen = mf._generator(args.seed, "audio_vae/released")
    t0 = time.time()
    notes = {}
    with torch.no_grad():
        lat = torch.randn(2, 32, 37, generator=gen)
        wav = 0.5 * torch.randn(2, 1, 37 * avae.hop_length, generator=gen)
        d = lambda m, x: x.to(args.device, next(m.parameters()).dtype)  # noqa: E731
        fx.add("decode.latents", lat, "(2, 32, 37) latents: 0.925 s of stereo at 40 latents/s")
        for key, fn, desc in (
                ("decode.dec_in_proj", lambda m: m.dec_in_proj(d(m, lat)), "dec_in_proj(latents)"),
                ("decode.waveform", lambda m: m.decode(d(m, lat), return_dict=False)[0], "decode(latents): (2, 1, 37 * hop)"),
                ("encode.mean", lambda m: m.encode(d(m, wav), return_dict=False)[0].mean, "posterior mean (2, 32, 37)"),
                ("encode.logs", lambda m: m.encode(d(m, wav), return_dict=False)[0].logs, "posterior log-std head")):
            ref, rel = exact_reference(avae, fn, None)
            notes[key] = rel
            fx.add(key, ref, desc + "; float64 run of the official code (its float32 GPU run differs by rel-L2 %.3g)" % rel)
        fx.add("encode.waveform", wav, "(2, 1, 29600) mono waveforms")
        fx.attrs["encoder_stages"] = encoder_stages(avae, wav, args.device)
    fx.attrs["float32_gpu_rel_l2_vs_float64"] = notes
    print(f"  audio_vae: official float32 on the GPU vs float64: {notes}", flush=True)
    write(fx, args.out, manifest, "_released")
    return {"audio_vae_s": round(time.time() - t0, 1)}


def text_cases(mt, seed, n_img, n_vid, blocks, cases):
    """The tiny-size oracle's presentations (make_text_fixtures.build_cases) at the released size: fl2va (label,
    one picture block, prompt), video (a reference video with its soundtrack: '<Audio 1>: ' '<Video 1>: ', then per
    2-frame block '<t seconds>' + its video block, then the prompt) and ref2va (the picture block, then the video's)."""
    def picture(p):
        p.text(seed, "<Picture 1>: ", mt.LABEL_LENGTHS["<Picture 1>: "])
        p.vision("image_pad", n_img)

    def video(p):
        p.text(seed, "<Audio 1>: ", mt.LABEL_LENGTHS["<Audio 1>: "])
        p.text(seed, "<Video 1>: ", mt.LABEL_LENGTHS["<Video 1>: "])
        for b in range(blocks):  # 2 fps: block b starts at b + 0.2 s, as the tiny oracle's two labels
            p.text(seed, f"<{b + 0.2:.1f} seconds>", 6)
            p.vision("video_pad", n_vid)

    out = {}
    for name, parts, prompt, n in (("fl2va", (picture,), "fl2va prompt", 24), ("video", (video,), "video prompt", 20),
                                   ("ref2va", (picture, video), "ref2va prompt", 20)):
        if name not in cases:
            continue
        p = mt.Presentation()
        for part in parts:
            part(p)
        p.text(seed, prompt, n)
        out[name] = {"pres": p, "image": picture in parts, "video": video in parts}
    return out


def text_fixture(args, manifest):
    """text_fl2va, text_video and text_ref2va at the released width: the snapshot's Qwen3-VL (every decoder layer it
    holds; the tap is hidden_states[layers - 1], so one layer follows it as in the release) with one picture of
    --text-image pixels and a reference video of --text-video frames through the full 27-block vision tower, recorded
    by the text-side oracle's hooks (make_text_fixtures.py) from transformers' Qwen3VLForConditionalGeneration, in the
    tiny oracle's presentations (text_cases). Each fixture carries every input it needs (the tiny text_ref2va borrows
    its pixels from the other two). float32 tensors come from the float64 run of the same model when --f64 is given
    (the float32 GPU run's own departure is recorded); bf16 from the model loaded in BF16."""
    import numpy as np
    import transformers
    import make_text_fixtures as mt

    te = os.path.join(args.snapshot, "FL2VA", "text_encoder")
    cfg = json.load(open(os.path.join(te, "config.json")))
    layers = cfg["text_config"]["num_hidden_layers"]
    if layers < len(cfg["vision_config"]["deepstack_visual_indexes"]) + 2:
        raise SystemExit(f"reference: {te} holds {layers} decoder layers; the deepstack taps need at least 5")
    # The oracle's module-level configuration, set to the released one (its ids are the released vocabulary's).
    mt.TINY_TEXT, mt.TINY_VISION = cfg["text_config"], cfg["vision_config"]
    mt.IDS, mt.TINY_PLAIN_VOCAB, mt.TAP = dict(mt.REAL_IDS), mt.REAL_FIRST_ADDED_ID, layers - 1
    h, w = (int(x) for x in args.text_image.split("x"))
    vt, vw, vh = (int(x) for x in args.text_video.split("x"))
    vm = cfg["vision_config"]["patch_size"] * cfg["vision_config"]["spatial_merge_size"]
    if vt % 2 or vw % vm or vh % vm or w % vm or h % vm:
        raise SystemExit(f"reference: --text-image {args.text_image} / --text-video {args.text_video}: sizes must be multiples of {vm}, frames even")
    cases = text_cases(mt, args.seed, (h // vm) * (w // vm), (vh // vm) * (vw // vm), vt // 2, args.text_cases.split(","))
    image = mt.make_frames(args.seed, "fullscale_picture", 1, h, w)[0]
    frames = mt.make_frames(args.seed, "fullscale_video", vt, vh, vw)
    proc_note = "transformers image and video processors"
    procs, pnotes = mt.load_processors(transformers, te, print)
    inputs = {}
    try:
        from PIL import Image
        got = procs["image"](images=[Image.fromarray(image)], return_tensors="pt")
        inputs.update(pixel_values=got["pixel_values"].float(), image_grid_thw=got["image_grid_thw"].long())
    except Exception as exc:  # noqa: BLE001  (no PIL/torchvision: a 32-aligned canvas resizes to itself)
        proc_note = f"own_patchify for the picture (identity resize; the image processor failed: {exc!r})"
        pv, grid = mt.own_patchify(image[None], cfg["vision_config"]["patch_size"], cfg["vision_config"]["spatial_merge_size"],
                                   cfg["vision_config"]["temporal_patch_size"])
        inputs.update(pixel_values=pv, image_grid_thw=torch.tensor([grid]))
    if any(c["video"] for c in cases.values()):
        vid = procs["video"](videos=[np.stack(list(frames))], do_sample_frames=False, return_tensors="pt")
        inputs.update(pixel_values_videos=vid["pixel_values_videos"].float(), video_grid_thw=vid["video_grid_thw"].long())
    for name, case in cases.items():
        print(f"  text_{name}: {len(case['pres'].ids)} tokens", flush=True)
    print(f"  text: {layers} layers, tap hidden_states[{mt.TAP}], picture {w}x{h}, video {vt} frames of {vw}x{vh}; {proc_note}; "
          f"video processor: {pnotes.get('video')}", flush=True)
    dev = torch.device(args.device)
    timings, caps = {}, {}
    for tag, dtype in (("bf16", torch.bfloat16), ("f32", torch.float32)):
        t0 = time.time()
        model, _ = mt.load_hf_model(transformers, te, dtype, dev)
        timings[f"text_load_{tag}_s"] = round(time.time() - t0, 1)
        for name, case in cases.items():
            t0 = time.time()
            caps[(name, tag)], _ = mt.hf_forward(model, case, inputs, dev, print)
            timings[f"text_{name}_{tag}_s"] = round(time.time() - t0, 2)
        rels = {}
        if tag == "f32" and args.f64:
            model.double()
            for name, case in cases.items():
                c64, _ = mt.hf_forward(model, case, inputs, dev, print)
                r32, r64 = caps[(name, "f32")]["hidden_tap"][0].double(), c64["hidden_tap"][0].double()
                rels[name] = float((r32 - r64).norm() / r64.norm())
                caps[(name, "f32")] = c64
        del model
        torch.cuda.empty_cache() if args.device.startswith("cuda") else None
    for name, case in cases.items():
        pres = case["pres"]
        fx = mt.Fixture(f"text_{name}", f"Qwen3-VL at the released width, {layers} decoder layers: the {name} presentation.")
        fx.add("in.input_ids", torch.tensor(pres.ids, dtype=torch.int64), "token ids (labels, vision blocks, prompt; random plain ids)")
        fx.add("in.mm_token_type_ids", torch.tensor(pres.mm_token_type_ids(), dtype=torch.int64), "Qwen mm_token_type_ids")
        pos = mt._c(caps[(name, "f32")], "lm.rope.position_ids")
        fx.add("in.position_ids", None if pos is None else pos[-3:, 0].long(), "(3, L) M-RoPE positions the model used")
        if case["image"]:
            if proc_note.startswith("transformers"):
                fx.add("in.image", torch.from_numpy(image), f"raw RGB8 picture ({h}, {w}, 3) handed to the image processor")
            fx.add("in.pixel_values", inputs["pixel_values"], "image processor output (patches, 1536)")
            fx.add("in.image_grid_thw", inputs["image_grid_thw"], "(1, 3) patch grid")
        if case["video"]:
            fx.add("in.video_frames", torch.from_numpy(np.ascontiguousarray(frames)),
                   f"raw RGB8 frames ({vt}, {vh}, {vw}, 3) handed to the video processor (do_sample_frames=False)")
            fx.add("in.pixel_values_videos", inputs["pixel_values_videos"], "video processor output (grid_t*h*w, 1536)")
            fx.add("in.video_grid_thw", inputs["video_grid_thw"], "(1, 3) [t, h, w]; t 2-frame blocks, each its own vision block")
        fx.add("h3.text_token_tags", torch.tensor(pres.tags, dtype=torch.int64), "DiT modality tags (1 text, 0 vision block)")
        mt.add_case_tensors(fx, "", caps[(name, "f32")], case, torch.float32, full=True)
        mt.add_case_tensors(fx, "bf16.", caps[(name, "bf16")], case, torch.bfloat16, full=True)
        fx.attrs.update(case=name, segments=pres.segments, seq_len=len(pres.ids), rows=len(pres.ids),
                        canvas=(args.text_image if case["image"] else "") + (" + " if case["image"] and case["video"] else "")
                        + (args.text_video if case["video"] else ""),
                        tap={"hidden_states_index": mt.TAP, "after_decoder_layer_index": mt.TAP - 1, "num_hidden_layers": layers},
                        processor=proc_note, video_processor=pnotes.get("video"),
                        float32_gpu_rel_l2_vs_float64={"out.hidden_tap": rels.get(name)})
        write(fx, args.out, manifest, "_released")
    print(f"  text: official float32 on the GPU vs float64 (hidden tap): {rels}; {timings}", flush=True)
    return timings


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--snapshot", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--families", default="dit,vae,audio")
    p.add_argument("--tasks", default="t2va,fl2va,ref2va")
    p.add_argument("--canvas", default="512x512x22", help="WxHxFRAMES of the DiT fixtures")
    p.add_argument("--vae-latent-frames", type=int, default=7, help="latent frames of the video VAE decode (5 = one 17-frame window)")
    p.add_argument("--f64", action="store_true", help="video VAE: the float64 run of the official code is the reference")
    p.add_argument("--vae-size", type=int, default=512, help="square canvas of the video VAE decode and encode")
    p.add_argument("--stream", choices=("auto", "on", "off"), default="auto",
                   help="DiT: keep the blocks on the meta device and load each from the snapshot for its forward (auto: past 8 blocks)")
    p.add_argument("--text-rows", type=int, default=128)
    p.add_argument("--text-image", default="512x512", help="WxH of the text encoder's picture (32-aligned)")
    p.add_argument("--text-video", default="4x864x480", help="TxWxH of the text encoder's reference video (T even, 32-aligned)")
    p.add_argument("--text-cases", default="fl2va,video,ref2va", help="text fixtures: fl2va, video (video blocks), ref2va (picture + video)")
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    os.makedirs(args.out, exist_ok=True)
    manifest = {"generator": "tools/fullscale/reference.py", "seed": args.seed, "torch": torch.__version__,
                "device": args.device + (f" ({torch.cuda.get_device_name(0)})" if args.device.startswith("cuda") else ""),
                "vendored": mf.h3_bootstrap.vendored_manifest(), "files": {}}
    timings = {}
    fams = args.families.split(",")
    with torch.no_grad():
        if "dit" in fams:
            timings.update(dit_fixtures(args, manifest))
        if "vae" in fams:
            timings.update(vae_fixture(args, manifest))
        if "audio" in fams:
            timings.update(audio_fixture(args, manifest))
        if "text" in fams:
            timings.update(text_fixture(args, manifest))
    manifest["timings"] = timings
    path = os.path.join(args.out, "manifest.json")
    old = json.load(open(path)) if os.path.isfile(path) else {"files": {}, "timings": {}}
    old["files"].update(manifest["files"])
    old["timings"].update(timings)
    manifest.update(files=old["files"], timings=old["timings"])
    json.dump(manifest, open(path, "w"), indent=1)
    print(json.dumps(timings))


if __name__ == "__main__":
    main()
