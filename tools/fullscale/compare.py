"""compare.py REFDIR OURSDIR [--json OUT] — every reference tensor of every fixture against ours.

For each fixture family and precision it prints the worst rel-L2 (|ours - ref|₂ / |ref|₂) over the tensors the
reference recorded (inputs `in.*` excluded) with its bound: float32 results 1e-5, the released mixed precision
(`bf16.*`) 2e-2. A missing or non-finite tensor fails. Exit 1 when any bound is exceeded.

For the mixed precision it also prints how far each side's BF16 result is from the reference's float32 result of
the same tensor (`f32.*`, exact arithmetic within 1e-5): when ours departs from float32 by as much as the official
BF16 run does, the BF16 difference between the two is rounding that precision owes to depth, not a defect of either
side; a defect shows as ours departing further than the official run."""
import json
import os
import sys

import torch

try:
    from safetensors.torch import load_file
except ImportError:  # the oracle's dependency-free reader (prepare.sh copies it into oracle/)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle"))
    from h3_st import load_file

F32_BOUND, BF16_BOUND = 1e-5, 2e-2
# Inputs of the VAE families (the DiT families name theirs in.*).
INPUTS = {"decode.z", "decode_tiled.z", "encode.video", "encode_image.video", "decode.latents", "encode.waveform"}


def main():
    ref_dir, ours_dir = sys.argv[1], sys.argv[2]
    out_json = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
    manifest = json.load(open(os.path.join(ref_dir, "manifest.json")))
    rows, failed = [], False
    for name in sorted(f for f in os.listdir(ref_dir) if f.endswith(".safetensors")):
        ref = load_file(os.path.join(ref_dir, name))
        path = os.path.join(ours_dir, name)
        ours = load_file(path) if os.path.isfile(path) else {}
        attrs = manifest["files"].get(name, {}).get("attrs", {})
        groups = {}
        for key, r in sorted(ref.items()):
            if key.startswith("in.") or key in INPUTS:
                continue
            prec = "bf16" if key.startswith("bf16.") else "fp32"
            g = groups.setdefault(prec, {"worst": 0.0, "worst_tensor": "", "tensors": 0, "problems": []})
            g["tensors"] += 1
            o = ours.get(key)
            if o is None:
                g["problems"].append(f"missing {key}")
                continue
            r64, o64 = r.double().flatten(), o.double().flatten()
            if r64.numel() != o64.numel():
                g["problems"].append(f"shape {key}: {list(o.shape)} vs {list(r.shape)}")
                continue
            if not torch.isfinite(o64).all():
                g["problems"].append(f"non-finite {key}")
                continue
            rel = float((o64 - r64).norm() / (r64.norm() or 1.0))
            g.setdefault("each", {})[key] = rel
            f32 = ref.get("f32." + key.removeprefix("bf16.")) if prec == "bf16" else None
            if f32 is not None and f32.numel() == r64.numel():
                x64 = f32.double().flatten()
                xn = x64.norm() or 1.0
                g.setdefault("drift", {})[key] = (float((r64 - x64).norm() / xn), float((o64 - x64).norm() / xn))
            if rel > g["worst"]:
                g["worst"], g["worst_tensor"] = rel, key
        for prec, g in groups.items():
            bound = BF16_BOUND if prec == "bf16" else F32_BOUND
            ok = not g["problems"] and g["worst"] <= bound
            failed |= not ok
            rows.append({"fixture": name.removesuffix(".safetensors"), "precision": prec, "worst_rel_l2": g["worst"],
                         "bound": bound, "ok": ok, "tensors": g["tensors"], "worst_tensor": g["worst_tensor"],
                         "problems": g["problems"][:5], "each": g.get("each", {}), "rows": attrs.get("rows"), "canvas": attrs.get("canvas"),
                         "drift_from_f32": g.get("drift", {})})
    print(f"{'fixture':34} {'prec':5} {'rows':>6} {'worst rel-L2':>12} {'bound':>7}  result  (worst tensor)")
    for r in rows:
        print(f"{r['fixture']:34} {r['precision']:5} {r['rows'] or '':>6} {r['worst_rel_l2']:12.3g} {r['bound']:7.0e}  "
              f"{'ok' if r['ok'] else 'FAIL'}    ({r['worst_tensor']}{'; ' + '; '.join(r['problems']) if r['problems'] else ''})")
    for r in rows:
        drift = r["drift_from_f32"]
        if not drift:
            continue
        worst = max(drift, key=lambda k: drift[k][1])
        ref_d, ours_d = drift[worst]
        print(f"{r['fixture']:34} bf16 departure from the float32 reference at {worst}: official {ref_d:.3e}, ours {ours_d:.3e} "
              f"(ours/official {ours_d / (ref_d or 1.0):.3f})")
    if out_json:
        json.dump({"rows": rows, "timings": manifest.get("timings", {}), "device": manifest.get("device")}, open(out_json, "w"), indent=1)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
