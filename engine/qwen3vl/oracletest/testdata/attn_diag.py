#!/usr/bin/env python3
"""Which attention kernel does the BF16 reference run? (H3 Studio diagnosis; our own code.)

Runs the seed-0 tiny Qwen3-VL (shared/oracle/make_text_fixtures.py weights and inputs) in bf16 on the CPU exactly as
the oracle does, records the arguments and result of every torch scaled_dot_product_attention call of the first
decoder layer and the first vision block, and replays each call under the math and flash-attention CPU backends
and with plain re-implementations, reporting which one reproduces the recorded output bit for bit.

Usage: python3 attn_diag.py --oracle DIR --out DIR
"""
import argparse
import json
import os
import sys
import tempfile

import torch
import torch.nn.functional as F


def emulate(q, k, v, scale, causal, round_probs, sum_rounded=False, mask=None):
    """float32 scores/softmax; optionally the unnormalised exps rounded to the input dtype before P.V."""
    dt = q.dtype
    q, k, v = q.float(), k.float(), v.float()
    if k.shape[0] != q.shape[0]:  # grouped-query attention: [H, L, D]
        rep = q.shape[0] // k.shape[0]
        k, v = k.repeat_interleave(rep, 0), v.repeat_interleave(rep, 0)
    s = (q @ k.transpose(-1, -2)) * scale
    if mask is not None and mask.dtype != torch.bool:
        s = s + mask.float()
    elif mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    elif causal:
        n = s.shape[-1]
        s = s + torch.full((n, n), float("-inf")).triu(1)
    e = torch.exp(s - s.amax(-1, keepdim=True))
    sm = e.sum(-1, keepdim=True)
    if round_probs:
        e = e.to(dt).float()
        if sum_rounded:
            sm = e.sum(-1, keepdim=True)
    return ((e @ v) / sm).to(dt)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    sys.path.insert(0, a.oracle)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import make_extra_fixtures
    import make_text_fixtures as mtf
    import transformers
    from torch.nn.attention import SDPBackend, sdpa_kernel

    tmp = tempfile.mkdtemp()
    te = os.path.join(tmp, "text_encoder")
    cases, inputs, model = make_extra_fixtures.tiny_bf16_model(mtf, transformers, te, print)

    calls = []
    orig = F.scaled_dot_product_attention

    def spy(*args, **kw):
        out = orig(*args, **kw)
        calls.append((args, kw, out))
        return out

    F.scaled_dot_product_attention = spy
    torch.nn.functional.scaled_dot_product_attention = spy
    try:
        mtf.hf_forward(model, cases["fl2va"], inputs, torch.device("cpu"), print)
    finally:
        F.scaled_dot_product_attention = orig
    report, tensors = {"torch": torch.__version__, "transformers": transformers.__version__, "num_calls": len(calls),
                       "cpu_capability": torch.backends.cpu.get_cpu_capability(), "calls": []}, {}
    # vision blocks run first (one call per block here: one image), then the decoder layers.
    picks = {"vision_block0": 0, "text_layer0": len(calls) - cfg["text_config"]["num_hidden_layers"]}
    for name, i in picks.items():
        args, kw, out = calls[i]
        q, k, v = args[:3]
        mask = args[3] if len(args) > 3 else kw.get("attn_mask")
        causal = bool(kw.get("is_causal", False))
        scale = kw.get("scale")
        if scale is None:
            scale = q.shape[-1] ** -0.5
        gqa = bool(kw.get("enable_gqa", False))
        rec = {"name": name, "q": list(q.shape), "k": list(k.shape), "dtype": str(q.dtype), "mask": None if mask is None else [list(mask.shape), str(mask.dtype)],
               "is_causal": causal, "scale": scale, "enable_gqa": gqa, "kwargs": sorted(kw)}
        for bname, backend in (("math", SDPBackend.MATH), ("flash", SDPBackend.FLASH_ATTENTION)):
            try:
                with sdpa_kernel(backend):
                    r = orig(*args, **kw)
                rec[f"replay_{bname}_equal"] = bool(torch.equal(r, out))
                rec[f"replay_{bname}_differ"] = int((r != out).sum())
            except Exception as exc:  # noqa: BLE001
                rec[f"replay_{bname}_error"] = repr(exc)
        m0 = None if mask is None else mask[0]
        if mask is not None:
            tensors[f"{name}.mask"] = mask.contiguous()
        for ename, kwe in (("emul_roundprobs", dict(round_probs=True)), ("emul_f32", dict(round_probs=False)),
                           ("emul_roundprobs_sumrounded", dict(round_probs=True, sum_rounded=True))):
            try:
                r = emulate(q[0], k[0], v[0], scale, causal, mask=m0, **kwe)[None]
                rec[ename + "_differ"] = int((r != out).sum())
            except Exception as exc:  # noqa: BLE001
                rec[ename + "_error"] = repr(exc)
        rec["numel"] = out.numel()
        report["calls"].append(rec)
        for tname, t in (("q", q), ("k", k), ("v", v), ("out", out)):
            tensors[f"{name}.{tname}"] = t[0].contiguous()
        print(json.dumps(rec))
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "attn_diag.json"), "w") as f:
        json.dump(report, f, indent=1)
    try:
        from safetensors.torch import save_file
    except Exception:  # noqa: BLE001
        import h3_st
        save_file = h3_st.save_file
    save_file(tensors, os.path.join(a.out, "attn_diag.safetensors"))


if __name__ == "__main__":
    main()
