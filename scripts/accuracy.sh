#!/usr/bin/env bash
# accuracy.sh [validate|cv|all]: rewrite the generated tables of docs/accuracy.md from servesim's
# own output, so that the page cannot drift from the code.
#
#   validate  the "servesim validate" block: the shipped corpus scored with no arguments, every
#             section before the per-case listing (a test compares it with the command's output)
#   cv        the "servesim fit --cv" block: the built-in scenario's cross-validation (minutes)
#   all       both (the default)
#
# Each block sits between "<!-- BEGIN generated: NAME -->" and "<!-- END generated: NAME -->"
# lines; the text around them is written by hand and left as it is.
set -euo pipefail
what=${1:-all}
case $what in validate|cv|all) ;; *) echo "usage: scripts/accuracy.sh [validate|cv|all]" >&2; exit 2 ;; esac
top=$(cd "$(dirname "$0")/.." && pwd)
doc=$top/docs/accuracy.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$top" && go build -o "$work/servesim" ./cmd/servesim)

# replace NAME FILE: put FILE's lines, fenced as text, between NAME's markers in the page.
replace() {
  local name=$1 body=$2
  grep -q "^<!-- BEGIN generated: $name -->\$" "$doc" || { echo "docs/accuracy.md: no BEGIN marker for $name" >&2; exit 1; }
  { printf '```text\n'; cat "$body"; printf '```\n'; } > "$work/block"
  awk -v name="$name" -v block="$work/block" '
    $0 == "<!-- BEGIN generated: " name " -->" { print; while ((getline l < block) > 0) print l; skip = 1; next }
    $0 == "<!-- END generated: " name " -->" { skip = 0 }
    !skip { print }
  ' "$doc" > "$work/doc"
  cp "$work/doc" "$doc"
}

if [ "$what" = validate ] || [ "$what" = all ]; then
  echo "servesim validate (the shipped corpus)" >&2
  "$work/servesim" validate --quiet | sed '/^Per case/,$d' > "$work/validate.txt"
  replace validate "$work/validate.txt"
fi
if [ "$what" = cv ] || [ "$what" = all ]; then
  echo "servesim fit --cv (the built-in scenario; several minutes)" >&2
  "$work/servesim" fit --cv --quiet > "$work/cv.txt"
  replace cv "$work/cv.txt"
fi
echo "docs/accuracy.md rewritten" >&2
