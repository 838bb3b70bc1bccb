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
# none: no reference, fixtures or comparison), TASKS (t2va,fl2va,ref2va), PARTITIONS (the snapshot's partitions:
# fl2va,ref2va when TASKS has ref2va and FAMILIES is not none, else fl2va: t2va and fl2va never read Ref2VA's
# transformer), CANVAS (512x512x22), TEXT_ROWS (128), REF_ARGS (more reference.py flags), STAGES (ref,ours: ref writes
# the snapshot and runs the reference, ours runs h3studio fixture and the comparison; a call of each on a machine
# kept warm splits a run that does not fit one call), WORK (where everything goes; unset: the snapshot goes to
# ${TMPDIR:-/tmp}/h3-fullscale when the file system holds it with 4 GiB to spare, else to /dev/shm/h3-fullscale (1 GiB), and
# the fixtures stay under ${TMPDIR:-/tmp}/h3-fullscale), MEMORY (0), MEM_MODES (resident streaming), DEADLINE (540 s
# per take); CANVAS also sets memory.sh's canvas.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}; mkdir -p "$out"
SEED=${SEED:-11}; BLOCKS=${BLOCKS:-6}; COMPONENTS=${COMPONENTS:-dit,video-vae,audio-vae}; TEXT_LAYERS=${TEXT_LAYERS:-12}
FAMILIES=${FAMILIES:-dit,vae,audio}; TASKS=${TASKS:-t2va,fl2va,ref2va}; CANVAS=${CANVAS:-512x512x22}; TEXT_ROWS=${TEXT_ROWS:-128}; REF_ARGS=${REF_ARGS:-}
STAGES=${STAGES:-ref,ours}
if [ -z "${PARTITIONS:-}" ]; then
  PARTITIONS=fl2va
  case ",$TASKS," in *,ref2va,*) [ "$FAMILIES" != none ] && PARTITIONS=fl2va,ref2va ;; esac
fi
h3=$here/h3studio
export LD_LIBRARY_PATH=$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
tmp=${TMPDIR:-/tmp}/h3-fullscale
free_kb() { mkdir -p "$1" && df -Pk "$1" | awk 'NR == 2 {print $4}'; }
need=$("$h3" testmodel --size released --print-bytes --components "$COMPONENTS" --partitions "$PARTITIONS" \
  --blocks "$BLOCKS" --text-layers "$TEXT_LAYERS") || exit 1
if [ -n "${WORK:-}" ]; then
  snap=$WORK/snapshot; fix=$WORK
else
  fix=$tmp
  snap=""
  for d in "$tmp" /dev/shm/h3-fullscale; do
    if [ -f "$d/snapshot/.done-$SEED-$BLOCKS-$TEXT_LAYERS-$COMPONENTS-$PARTITIONS" ]; then snap=$d/snapshot; break; fi
  done
  if [ -z "$snap" ]; then
    # Spare room: 4 GiB on the disk (the fixtures go there too), 1 GiB on /dev/shm (the configs).
    for d in "$tmp:4" /dev/shm/h3-fullscale:1; do
      spare=${d##*:}; d=${d%:*}
      rm -rf "$d/snapshot"  # an older snapshot of other parameters
      if [ $(( $(free_kb "$d") * 1024 )) -gt $(( need + (spare << 30) )) ]; then snap=$d/snapshot; break; fi
    done
  fi
  if [ -z "$snap" ]; then
    echo "run.sh: the snapshot needs $(( need >> 30 )) GiB; ${tmp%/h3-fullscale} has $(( $(free_kb "$tmp") >> 20 )) GiB free," \
      "/dev/shm $(( $(free_kb /dev/shm/h3-fullscale) >> 20 )) GiB: neither holds it with room to spare (4 GiB, 1 GiB)" >&2
    exit 1
  fi
fi
ref=$fix/ref; ours=$fix/ours
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
log() { echo "[$(date +%T)] $*" | tee -a "$out/results.txt"; }
lscpu | grep -E '^(Model name|CPU\(s\))' | tee -a "$out/results.txt"
marker=$snap/.done-$SEED-$BLOCKS-$TEXT_LAYERS-$COMPONENTS-$PARTITIONS
log "snapshot: $snap ($(( need >> 20 )) MiB of tensors, partitions $PARTITIONS); fixtures under $fix"
if [ ! -f "$marker" ]; then
  case ",$STAGES," in *,ref,*) ;; *) log "no snapshot of these parameters at $snap: run STAGES=ref first on this machine"; exit 1 ;; esac
  rm -rf "$snap" "$ref" "$ours"; log "writing the snapshot (seed $SEED, $BLOCKS blocks, $COMPONENTS)"
  /usr/bin/time -f "testmodel: %e s, %M KB peak RSS" "$h3" testmodel --size released --components "$COMPONENTS" --partitions "$PARTITIONS" \
    --blocks "$BLOCKS" --text-layers "$TEXT_LAYERS" --seed "$SEED" -o "$snap" 2>&1 | tail -n 2 | tee -a "$out/results.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || exit 1
  touch "$marker"
fi
df -h "$snap" | tail -n 1 | tee -a "$out/results.txt"; du -sh "$snap" | tee -a "$out/results.txt"
st=0
if [ "$FAMILIES" != none ]; then
  mkdir -p "$ref" "$ours"
  case ",$STAGES," in *,ref,*)
    log "reference on the GPU: $FAMILIES ($TASKS at $CANVAS)"
    python3 "$here/reference.py" --snapshot "$snap" --out "$ref" --seed "$SEED" --families "$FAMILIES" --tasks "$TASKS" \
      --canvas "$CANVAS" --text-rows "$TEXT_ROWS" $REF_ARGS 2>&1 | tee -a "$out/results.txt"
    [ "${PIPESTATUS[0]}" = 0 ] || exit 1
    rm -rf "$ref"/_*_diffusers ;;
  esac
  case ",$STAGES," in *,ours,*) ;; *) exit 0 ;; esac
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
  H3=$h3 WORK=$fix/memory CANVAS=$CANVAS bash "$here/memory.sh" "$snap" "$out" ${MEM_MODES:-resident streaming} 2>&1 | tee -a "$out/results.txt"
fi
exit "$st"
