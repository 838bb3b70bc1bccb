#!/usr/bin/python3
"""Regenerates engine/media/testdata/audio: torchaudio fixtures for reference-audio normalisation.

Run with Debian's python3-torchaudio (0.13) and python3-numpy:  /usr/bin/python3 engine/media/testdata/gen_audio.py
Each case is a waveform at its native rate (raw float32 little-endian, interleaved) and the reference's
normalisation of it, as diffusers' MiniMaxH3Ref2VASetupStep._normalize_audio_condition does it: truncate at
the native rate to int(frames/24*rate) samples (when frames is given), repeat a mono channel to stereo, then
one torchaudio.transforms.Resample(rate, 32000) with its defaults. Outputs are float32 interleaved stereo.
It also writes WAV files in the encodings the Go reader accepts, with the float32 samples they must decode to.
"""
import json, os, struct, sys

import numpy as np
import torch
import torchaudio

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "audio")
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(7)


def signal(rate, channels, seconds):
    n = int(rate * seconds)
    t = np.arange(n) / rate
    chans = []
    for c in range(channels):
        f0 = 220.0 * (c + 1)
        chirp = np.sin(2 * np.pi * (f0 * t + 0.5 * (rate * 0.45 - f0) / seconds * t * t))  # sweeps to 0.45·rate
        chans.append(0.4 * chirp + 0.2 * rng.standard_normal(n) * 0.5)
    return np.clip(np.stack(chans), -1, 1).astype(np.float32)  # (channels, n)


def raw(name, a):  # a: (channels, n) → interleaved
    np.ascontiguousarray(a.T).astype("<f4").tofile(os.path.join(OUT, name))
    return name


cases = []
for rate, ch, frames in [(44100, 2, None), (48000, 1, None), (22050, 2, 2), (16000, 1, None), (8000, 2, None),
                         (96000, 1, 1), (11025, 1, None), (32000, 2, 2)]:
    w = signal(rate, ch, 0.12)
    src = raw(f"in_{rate}_{ch}ch.f32", w)
    x = torch.from_numpy(w)
    if frames is not None:
        x = x[:, : int(frames / 24 * rate)]
    if x.shape[0] != 2:
        x = x.expand(2, -1).contiguous()
    if rate != 32000:
        x = torchaudio.transforms.Resample(rate, 32000)(x)
    out = raw(f"out_{rate}_{ch}ch.f32", x.numpy())
    cases.append({"in": src, "rate": rate, "channels": ch, "frames": frames or 0, "want": out})

# WAV encodings: (format tag, bits). The expected samples are what soundfile/torchaudio decode (v / 2^(bits-1)).
wavs = []
base = signal(22050, 2, 0.05)
for tag, bits, ext in [(1, 8, False), (1, 16, False), (1, 24, False), (1, 32, False), (3, 32, False), (3, 64, False),
                       (1, 16, True), (3, 32, True)]:
    n = base.shape[1]
    inter = base.T.reshape(-1)
    if tag == 1:
        fs = 2 ** (bits - 1)
        q = np.clip(np.round(inter * fs), -fs, fs - 1).astype(np.int64)
        want = (q / fs).astype(np.float32)
        if bits == 8:
            body = (q + 128).astype(np.uint8).tobytes()
        elif bits == 24:
            body = b"".join(int(v).to_bytes(3, "little", signed=True) for v in q)
        else:
            body = q.astype({16: "<i2", 32: "<i4"}[bits]).tobytes()
    else:
        body = inter.astype({32: "<f4", 64: "<f8"}[bits]).tobytes()
        want = inter.astype(np.float32)
    block = 2 * bits // 8
    if ext:
        sub = struct.pack("<H", tag) + b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"
        fmt = struct.pack("<HHIIHHHHI", 0xFFFE, 2, 22050, 22050 * block, block, bits, 22, bits, 3) + sub
    else:
        fmt = struct.pack("<HHIIHH", tag, 2, 22050, 22050 * block, block, bits)
    chunks = b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"LIST" + struct.pack("<I", 4) + b"INFO"
    chunks += b"data" + struct.pack("<I", len(body)) + body + (b"\x00" if len(body) % 2 else b"")
    name = f"pcm_{'ext_' if ext else ''}{'f' if tag == 3 else 'i'}{bits}.wav"
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(b"RIFF" + struct.pack("<I", 4 + len(chunks)) + b"WAVE" + chunks)
    np.asarray(want, "<f4").tofile(os.path.join(OUT, name + ".f32"))
    wavs.append({"file": name, "rate": 22050, "channels": 2, "want": name + ".f32"})

with open(os.path.join(OUT, "manifest.json"), "w") as f:
    json.dump({"torch": torch.__version__, "torchaudio": torchaudio.__version__, "resample": cases, "wav": wavs}, f,
              indent=1)
print(f"wrote {len(cases)} resampling and {len(wavs)} WAV cases (torchaudio {torchaudio.__version__})", file=sys.stderr)
