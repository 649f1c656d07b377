#!/usr/bin/env bash
# byte-identical.sh BASE [HEAD]: build servesim at two revisions and compare the outputs a
# refactoring must not change: the seed matrix as CSV (shipped calibration and priors), the
# planner's 128K question as JSON, the chat workload as JSON and every SVG figure.
#
# HEAD defaults to the working tree. Lines naming the servesim version ("servesim_version") are
# dropped before comparing, since the version is expected to differ. Exit 0 when all are identical.
set -euo pipefail
base=${1:?usage: scripts/byte-identical.sh BASE_REV [HEAD_REV]}
head=${2:-}
top=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'git -C "$top" worktree remove --force "$work/base-src" >/dev/null 2>&1 || true; git -C "$top" worktree remove --force "$work/head-src" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

build() { # rev dir -> binary path
  local rev=$1 name=$2 src
  if [ -z "$rev" ]; then
    src=$top
  else
    git -C "$top" worktree add --detach "$work/$name-src" "$rev" >/dev/null 2>&1
    src=$work/$name-src
  fi
  (cd "$src" && go build -o "$work/$name" ./cmd/servesim)
}

outputs() { # binary dir
  local bin=$1 out=$2
  mkdir -p "$out/figs"
  "$bin" matrix --format csv > "$out/matrix-calibrated.csv" 2>/dev/null
  "$bin" matrix --format csv --uncalibrated > "$out/matrix-priors.csv" 2>/dev/null
  "$bin" plan --model glm-5.3-flash --context 128K --users 16 --slo-tpot-ms 40 --format json > "$out/plan.json" 2>/dev/null
  "$bin" simulate --workload chat --format json > "$out/simulate-chat.json" 2>/dev/null
  "$bin" plot --out "$out/figs" >/dev/null 2>&1
  rm -f "$out"/figs/*.png
  for f in "$out"/*.json; do grep -v '"servesim_version"' "$f" > "$f.tmp" && mv "$f.tmp" "$f"; done
}

echo "building $base and ${head:-the working tree}" >&2
build "$base" base
build "$head" head
outputs "$work/base" "$work/out-base"
outputs "$work/head" "$work/out-head"
n=$(ls "$work/out-base/figs"/*.svg | wc -l)
if diff -r "$work/out-base" "$work/out-head" > "$work/diff.txt"; then
  echo "identical: matrix csv (calibrated, priors), plan json, simulate chat json, $n SVG figures"
else
  head -40 "$work/diff.txt"
  echo "files that differ:" >&2
  diff -rq "$work/out-base" "$work/out-head" | sed "s|$work/||g" >&2 || true
  echo "DIFFERENT (above)" >&2
  exit 1
fi
