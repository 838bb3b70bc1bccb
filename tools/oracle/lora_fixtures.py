"""LoRA fixtures for engine/dit: the official MiniMax-H3 transformer with a LoRA merged in float32.

Runs the vendored diffusers MiniMaxH3Transformer3DModel (through the shared oracle's bootstrap: pass the oracle
folder, with its vendor/ rebuilt, as --oracle) on the tiny seed-0 models of the dit_fl2va and dit_ref2va
fixtures, with a PEFT-style LoRA (diffusers names, rank 3, alpha 6 in __metadata__, every adaptable projection:
to_q/to_k/to_v/to_out.0/ff.net.0.proj/ff.net.2, adaln_proj.linear, the refiner's, norm_out.linear) merged into the
float32 weights as PEFT's merge does (W += alpha/rank · B·A), and writes for each:

  lora_<name>_peft.safetensors     the LoRA (BF16)
  lora_<name>_release.safetensors  the same update in release names (qkv_proj rows interleaved per head, fc1 =
                                   [gate; value], final_layer.adaln_proj.linear), no alpha (alpha = rank, as
                                   larryvrh's files): lora_B times alpha/rank
  lora_<name>_comfyui.safetensors  release names behind diffusion_model. with contiguous [q; k; v] qkv rows, .alpha
  lora_<name>.safetensors          f32.out.sample, f32.out.audio_sample: the merged model's velocities on the
                                   dit_<name> fixture inputs; base.out.sample: the unmerged model's (must equal
                                   the dit_<name> fixture's, proving the same weights)

Usage: /usr/bin/python3 tools/oracle/lora_fixtures.py --oracle DIR --fixtures engine/dit/testdata --out engine/dit/testdata
"""
import argparse
import json
import os
import sys

p = argparse.ArgumentParser()
p.add_argument("--oracle", required=True)
p.add_argument("--fixtures", required=True)
p.add_argument("--out", required=True)
args = p.parse_args()
sys.path.insert(0, os.path.abspath(args.oracle))
import make_fixtures as mf  # noqa: E402  (bootstraps the vendored diffusers)
import h3_st  # noqa: E402
import torch  # noqa: E402

RANK, ALPHA = 3, 6.0
SCALE = ALPHA / RANK


def bf16(t):
    return t.to(torch.bfloat16).to(torch.float32)


def bf16s(d):
    return {k: v.to(torch.bfloat16) for k, v in d.items()}


def modules(cfg):
    """(diffusers module name, kind) of every adaptable projection."""
    out = []
    for prefix, n, adaln in (("transformer_blocks", cfg["num_layers"], True), ("token_refiner.refiner_blocks", cfg["num_refiner_layers"], False)):
        for i in range(n):
            for m in ("attn.to_q", "attn.to_k", "attn.to_v", "attn.to_out.0", "ff.net.0.proj", "ff.net.2"):
                out.append(f"{prefix}.{i}.{m}")
            if adaln:
                out.append(f"{prefix}.{i}.adaln_proj.linear")
    out.append("norm_out.linear")
    return out


def make_lora(model, cfg, seed):
    gen = torch.Generator().manual_seed(seed)
    lora = {}
    for name in modules(cfg):
        w = model.get_submodule(name).weight
        out_f, in_f = w.shape
        a = bf16(torch.randn(RANK, in_f, generator=gen) * 0.5)
        b = bf16(torch.randn(out_f, RANK, generator=gen) * 0.03)
        lora[name] = (a, b)
    return lora


def merge(model, lora):
    with torch.no_grad():
        for name, (a, b) in lora.items():
            w = model.get_submodule(name).weight
            w += (SCALE * (b.double() @ a.double())).to(w.dtype)


def release_name(name):
    """diffusers module -> (release module, part): part 0/1/2 for to_q/to_k/to_v."""
    n = name.replace("transformer_blocks.", "blocks.").replace("token_refiner.refiner_blocks.", "token_refiner.blocks.")
    if n == "norm_out.linear":
        return "final_layer.adaln_proj.linear", None
    for i, q in enumerate(("attn.to_q", "attn.to_k", "attn.to_v")):
        if n.endswith(q):
            return n[: -len(q)] + "attn.qkv_proj", i
    return n.replace("attn.to_out.0", "attn.out_proj").replace("ff.net.0.proj", "mlp.fc1").replace("ff.net.2", "mlp.fc2"), None


def fused(lora, cfg, interleaved):
    """Release-named factors: q, k, v stacked (rank 3r, block-structured B), fc1 halves as [gate; value]."""
    heads, d = cfg["num_attention_heads"], cfg["attention_head_dim"]
    inner = heads * d
    out, qkv = {}, {}
    for name, (a, b) in lora.items():
        rel, part = release_name(name)
        if part is not None:
            qkv.setdefault(rel, [None] * 3)[part] = (a, b)
            continue
        if name.endswith("ff.net.0.proj"):
            f = b.shape[0] // 2
            b = torch.cat([b[f:], b[:f]])  # [value; gate] -> [gate; value]
        out[rel] = (a, b)
    for rel, parts in qkv.items():
        a = torch.cat([p[0] for p in parts])
        b = torch.zeros(3 * inner, 3 * RANK)
        for c, (_, bc) in enumerate(parts):
            for h in range(heads):
                rows = slice(h * 3 * d + c * d, h * 3 * d + (c + 1) * d) if interleaved else slice(c * inner + h * d, c * inner + (h + 1) * d)
                b[rows, c * RANK:(c + 1) * RANK] = bc[h * d:(h + 1) * d]
        out[rel] = (a, b)
    return out


def run(name, model_dir, fixture):
    model, cfg, state = mf.load_diffusers_folder(mf.MiniMaxH3Transformer3DModel, model_dir) if os.path.isfile(os.path.join(model_dir, "config.json")) and "transformer_ref" in model_dir else (None, None, None)
    if model is None:
        # The released-layout FL2VA transformer is the seed-0 diffusers model written in the original layout.
        model, _, _ = mf.build_models(0)
        cfg = mf.TINY_DIT
    else:
        model.load_state_dict({k: v.float() for k, v in state.items()}, strict=True)
    model = model.float().eval()
    fx = h3_st.load_file(os.path.join(args.fixtures, fixture))
    inputs = {k[3:]: v for k, v in fx.items() if k.startswith("in.")}
    base_v, base_a, _ = mf.run_dit(model, inputs, "cpu", torch.float32)
    ref_v = fx["f32.out.sample"]
    err = float((base_v - ref_v).norm() / ref_v.norm())
    assert err < 1e-6, f"{name}: the rebuilt model differs from the dit fixture's (rel-L2 {err:.3g})"
    lora = make_lora(model, cfg, seed={"fl2va": 17, "ref2va": 18}[name])
    merge(model, lora)
    v, a, _ = mf.run_dit(model, inputs, "cpu", torch.float32)
    moved = float((v - base_v).norm() / base_v.norm())
    print(f"{name}: base matches dit_{name} (rel-L2 {err:.2g}); the merged LoRA moves the video velocity by {moved:.3f}")
    meta = {"h3_fixture": "lora", "rank": str(RANK), "alpha": str(ALPHA),
            "reference": "diffusers MiniMaxH3Transformer3DModel @ 58eb52c0, float32, W += alpha/rank·B·A"}
    h3_st.save_file({"f32.out.sample": v, "f32.out.audio_sample": a, "base.out.sample": base_v},
                    os.path.join(args.out, f"lora_{name}.safetensors"), metadata=meta)
    peft = {}
    for mod, (am, bm) in lora.items():
        peft[f"{mod}.lora_A.weight"], peft[f"{mod}.lora_B.weight"] = am, bm
    h3_st.save_file(bf16s(peft), os.path.join(args.out, f"lora_{name}_peft.safetensors"), metadata={"alpha": str(ALPHA)})
    rel = {}
    for mod, (am, bm) in fused(lora, cfg, True).items():
        rel[f"{mod}.lora_A.weight"], rel[f"{mod}.lora_B.weight"] = am, bm * SCALE  # exact: SCALE is 2
    h3_st.save_file(bf16s(rel), os.path.join(args.out, f"lora_{name}_release.safetensors"))
    comfy = {}
    for mod, (am, bm) in fused(lora, cfg, False).items():
        k = "diffusion_model." + mod
        comfy[f"{k}.lora_A.weight"], comfy[f"{k}.lora_B.weight"] = am, bm
        comfy[f"{k}.alpha"] = torch.tensor(ALPHA * am.shape[0] / RANK)
    h3_st.save_file(bf16s(comfy), os.path.join(args.out, f"lora_{name}_comfyui.safetensors"))


run("fl2va", os.path.join(args.fixtures, "FL2VA", "transformer"), "dit_fl2va.safetensors")
run("ref2va", os.path.join(args.fixtures, "transformer_ref"), "dit_ref2va.safetensors")
