#!/usr/bin/env bash
# prepare.sh DEST — assemble what the full-scale harness needs on the GPU machine into DEST (an ignored folder
# of the checkout, carried there): a Linux h3studio binary, the project's oracle (../shared/oracle: bootstrap,
# shim, fixture builders), this folder's scripts, and the verbatim diffusers files the oracle executes, taken
# from a git clone of huggingface/diffusers named by DIFFUSERS_GIT at the commit the oracle's README pins.
# Third-party files are only copied into DEST, never committed.
set -euo pipefail
dest=${1:?usage: prepare.sh DEST}
root=$(cd "$(dirname "$0")/../.." && pwd)
oracle=${ORACLE_DIR:-$root/../shared/oracle}
commit=58eb52c0803ea9af3abec60841c2a093bdf1f951
: "${DIFFUSERS_GIT:?set DIFFUSERS_GIT to a git directory of huggingface/diffusers holding commit $commit}"
mkdir -p "$dest"
(cd "$root" && GOOS=linux GOARCH=amd64 go build -o "$dest/h3studio" ./app)
# The binary links Fyne's GL/X11 and ALSA libraries (cgo); a GPU server has none, so they travel beside it
# (everything ldd lists but the C library itself). run.sh puts them on LD_LIBRARY_PATH.
rm -rf "$dest/lib"; mkdir -p "$dest/lib"
ldd "$dest/h3studio" | awk '$3 ~ /^\// {print $3}' | grep -vE '/(libc|libm|libpthread|libdl|ld-linux[^/]*)\.so' | xargs -r -I{} cp -L {} "$dest/lib/"
rm -rf "$dest/oracle"; mkdir -p "$dest/oracle"
cp -r "$oracle/shim" "$oracle/h3_bootstrap.py" "$oracle/h3_st.py" "$oracle/make_fixtures.py" "$oracle/make_text_fixtures.py" "$dest/oracle/"
files=$(python3 - "$oracle/h3_bootstrap.py" <<'PY'
import re, sys
src = open(sys.argv[1]).read()
block = src[src.index("VENDORED_DIFFUSERS_FILES"):]
print(" ".join(re.findall(r'"([^"]+\.py)"', block[:block.index("]")])))
PY
)
for f in $files; do
  mkdir -p "$dest/oracle/vendor/diffusers/$(dirname "$f")"
  git --git-dir="$DIFFUSERS_GIT" show "$commit:$f" >"$dest/oracle/vendor/diffusers/$f"
done
cp "$root/tools/fullscale/"*.py "$root/tools/fullscale/"*.sh "$dest/"
echo "prepared $dest: $(du -sh "$dest" | cut -f1)"
