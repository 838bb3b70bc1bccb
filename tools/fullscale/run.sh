#!/usr/bin/env bash
# run.sh — the full-scale parity harness, one command on the GPU machine (from the folder prepare.sh filled):
#   1. h3studio testmodel --size released writes a full-width random snapshot (BLOCKS DiT blocks, COMPONENTS);
#   2. reference.py runs the official implementation on the GPU (exact float32, no TF32) and writes fixtures;
#   3. h3studio fixture computes the same results on the CPU (all cores);
#   4. compare.py prints the worst rel-L2 per fixture and precision against its bound.
# Then, with MEMORY=1, memory.sh: h3studio generate at 512x512x22 in each of MEM_MODES, peak RSS per phase against
# the engine's prediction for this snapshot and h3studio plan's for the released depth.
# Results land in $OUT (or ./out): results-HHMMSS.json, results.txt, memory-plan.txt, memory-MODE.txt.
# Parameters: SEED (11), BLOCKS (6), TEXT_LAYERS (12), COMPONENTS (dit,video-vae,audio-vae), FAMILIES (dit,vae,audio,text;
# none: no reference, fixtures or comparison, and the snapshot's Ref2VA transformer, which t2va does not use, is
# deleted), TASKS (t2va,fl2va,ref2va), CANVAS (512x512x22), TEXT_ROWS (128), REF_ARGS (more reference.py flags),
# WORK ($TMPDIR/h3-fullscale, /tmp when unset), MEMORY (0), MEM_MODES (resident streaming), DEADLINE (540 s per take), CANVAS (memory.sh: 512x512x22).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}; mkdir -p "$out"
work=${WORK:-${TMPDIR:-/tmp}/h3-fullscale}; snap=$work/snapshot; ref=$work/ref; ours=$work/ours
SEED=${SEED:-11}; BLOCKS=${BLOCKS:-6}; COMPONENTS=${COMPONENTS:-dit,video-vae,audio-vae}; TEXT_LAYERS=${TEXT_LAYERS:-12}
FAMILIES=${FAMILIES:-dit,vae,audio}; TASKS=${TASKS:-t2va,fl2va,ref2va}; CANVAS=${CANVAS:-512x512x22}; TEXT_ROWS=${TEXT_ROWS:-128}; REF_ARGS=${REF_ARGS:-}
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
h3=$here/h3studio
export LD_LIBRARY_PATH=$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
log() { echo "[$(date +%T)] $*" | tee -a "$out/results.txt"; }
lscpu | grep -E '^(Model name|CPU\(s\))' | tee -a "$out/results.txt"
marker=$snap/.done-$SEED-$BLOCKS-$TEXT_LAYERS-$COMPONENTS
dropped=$snap/Ref2VA/.transformer-deleted
if [ ! -f "$marker" ] || { [ "$FAMILIES" != none ] && [ -f "$dropped" ]; }; then
  rm -rf "$snap"; log "writing the snapshot (seed $SEED, $BLOCKS blocks, $COMPONENTS)"
  /usr/bin/time -f "testmodel: %e s, %M KB peak RSS" "$h3" testmodel --size released --components "$COMPONENTS" \
    --blocks "$BLOCKS" --text-layers "$TEXT_LAYERS" --seed "$SEED" -o "$snap" 2>&1 | tail -n 2 | tee -a "$out/results.txt" || exit 1
  touch "$marker"
fi
if [ "$FAMILIES" = none ] && [ -d "$snap/Ref2VA/transformer" ]; then rm -rf "$snap/Ref2VA/transformer"; touch "$dropped"; fi
df -h "$snap" | tail -n 1 | tee -a "$out/results.txt"; du -sh "$snap" | tee -a "$out/results.txt"
st=0
if [ "$FAMILIES" != none ]; then
  mkdir -p "$ref" "$ours"
  log "reference on the GPU: $FAMILIES ($TASKS at $CANVAS)"
  python3 "$here/reference.py" --snapshot "$snap" --out "$ref" --seed "$SEED" --families "$FAMILIES" --tasks "$TASKS" \
    --canvas "$CANVAS" --text-rows "$TEXT_ROWS" $REF_ARGS 2>&1 | tee -a "$out/results.txt" || exit 1
  rm -rf "$ref"/_*_diffusers
  for f in "$ref"/*.safetensors; do
    n=$(basename "$f")
    [ -f "$ours/$n" ] && [ "$ours/$n" -nt "$f" ] && continue
    log "h3studio fixture $n"
    /usr/bin/time -f "  %e s, %M KB peak RSS" "$h3" fixture -d "$snap" -i "$f" -o "$ours/$n" 2>&1 | tail -n 3 | tee -a "$out/results.txt"
  done
  python3 "$here/compare.py" "$ref" "$ours" --json "$out/results-$(date +%H%M%S).json" 2>&1 | tee -a "$out/results.txt"
  st=${PIPESTATUS[0]}
fi
if [ "${MEMORY:-0}" = 1 ]; then
  log "memory: h3studio generate at 512x512x22: ${MEM_MODES:-resident streaming}"
  H3=$h3 WORK=$work/memory bash "$here/memory.sh" "$snap" "$out" ${MEM_MODES:-resident streaming} 2>&1 | tee -a "$out/results.txt"
fi
exit "$st"
