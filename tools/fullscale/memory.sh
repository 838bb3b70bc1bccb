#!/usr/bin/env bash
# memory.sh SNAPSHOT OUTDIR MODE... — the memory run of the full-scale harness: `h3studio generate` at 512x512x22
# (2 passes, the fewest generate takes; frames as PNG and the sound as WAV, so no ffmpeg is needed) in each memory MODE (resident, streaming, ...), its process sampled every
# 0.2 s: VmRSS / RssAnon / RssFile / RssShmem from /proc, the peak RSS per phase (the phase read from generate's
# progress lines) and over the run (ru_maxrss, /usr/bin/time), beside what the engine predicted for this snapshot
# (generate's "memory: MODE, predicted peak" line, its --profile table) and `h3studio plan` for the released depth.
# Writes OUTDIR/memory-MODE.txt and OUTDIR/memory-plan.txt (the logs and samples under WORK). Environment: H3 (the
# binary), WORK (default OUTDIR), DEADLINE (seconds per take, default 540: a take still running then is stopped and
# its samples so far reported), CANVAS (WIDTHxHEIGHT, default 512x512).
set -uo pipefail
snap=${1:?usage: memory.sh SNAPSHOT OUTDIR MODE...}; out=${2:?}; shift 2
h3=${H3:-h3studio}; deadline=${DEADLINE:-540}; work=${WORK:-$out}
canvas=${CANVAS:-512x512}; width=${canvas%x*}; height=${canvas#*x}
mkdir -p "$out" "$work"
# The released snapshot's tokenizer is a stand-in (no BPE model); the memory run takes the demo checkpoint's (a
# real byte-level BPE with the chat template's special tokens; a prompt's ids stay inside the released vocabulary).
if grep -q stand-in "$snap/FL2VA/tokenizer/tokenizer.json" 2>/dev/null; then
  rm -rf "$work/demo"; "$h3" testmodel -o "$work/demo" >/dev/null && cp "$work/demo/FL2VA/tokenizer/"* "$snap/FL2VA/tokenizer/"
fi
"$h3" plan -canvas "$canvas" -frames 22 -steps 2 >"$out/memory-plan.txt" 2>&1
"$h3" plan -canvas "$canvas" -frames 22 -steps 2 -layers 35 -component dit >>"$out/memory-plan.txt" 2>&1
for mode in "$@"; do
  log=$work/memory-$mode.log; rep=$out/memory-$mode.txt
  /usr/bin/time -f "ru_maxrss %M KB, %e s wall, %U s user" -o "$work/time-$mode" \
    "$h3" generate -d "$snap" -p "a test" --width "$width" --height "$height" --frames 22 --steps 2 --memory "$mode" --profile \
    -o '' --frames-dir "$work/frames-$mode" --wav "$work/take-$mode.wav" >"$log" 2>&1 &
  tpid=$!; pid=""
  for _ in $(seq 50); do pid=$(pgrep -P "$tpid" | head -n 1); [ -n "$pid" ] && break; sleep 0.1; done
  start=$(date +%s.%N); : >"$work/samples-$mode"
  while kill -0 "$tpid" 2>/dev/null; do
    if [ -n "$pid" ] && [ -r "/proc/$pid/status" ]; then
      phase=$(tr '\r' '\n' <"$log" | grep -E '^[a-z-]+ +[0-9]+/[0-9]+' | tail -n 1 | awk '{print $1}')
      awk -v t="$(date +%s.%N)" -v s="$start" -v ph="${phase:-start}" '
        /^(VmRSS|VmHWM|RssAnon|RssFile|RssShmem):/ {v[$1] = $2}
        END {printf "%.1f %s %d %d %d %d %d\n", t - s, ph, v["VmRSS:"], v["VmHWM:"], v["RssAnon:"], v["RssFile:"], v["RssShmem:"]}' \
        "/proc/$pid/status" >>"$work/samples-$mode" 2>/dev/null
    fi
    if awk -v t="$(date +%s.%N)" -v s="$start" -v d="$deadline" 'BEGIN {exit !(t - s > d)}'; then
      echo "stopped at the ${deadline}-s deadline" >>"$log"; kill "$pid" 2>/dev/null; sleep 2; kill -9 "$pid" 2>/dev/null
    fi
    sleep 0.2
  done
  wait "$tpid"; st=$?
  {
    echo "== generate --memory $mode (exit $st) on $snap"
    grep -E '^(memory|note):' "$log"
    sed -n '/^phase /,$p' "$log"
    cat "$work/time-$mode" 2>/dev/null
    echo "peak RSS per phase (GiB; samples every 0.2 s: time s, phase, VmRSS, VmHWM, RssAnon, RssFile, RssShmem in KB):"
    awk '{ph = $2; if (!(ph in m) || $3 > m[ph]) {m[ph] = $3; a[ph] = $5; f[ph] = $6; s[ph] = $7}; if (!(ph in o)) {o[ph] = ++n; name[n] = ph}; t[ph] = $1; h = $4}
      END {for (i = 1; i <= n; i++) {p = name[i]; printf "  %-14s until %6.1f s  RSS %6.2f (anon %6.2f, file %6.2f, shmem %6.2f)\n", p, t[p], m[p] / 1048576, a[p] / 1048576, f[p] / 1048576, s[p] / 1048576}
           printf "  VmHWM at the last sample %.2f GiB\n", h / 1048576}' "$work/samples-$mode"
    echo "last output:"; tr '\r' '\n' <"$log" | grep -v '^\s*$' | tail -n 4
  } >"$rep"
  cat "$rep"
  rm -rf "$work/frames-$mode" "$work/take-$mode.wav"
done
