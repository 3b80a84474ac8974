#!/usr/bin/env bash
# Run HERE around a device call: `out` moves public/model, public/demo and bench/evidence/results (tracked, ~45 MB)
# to $H200_MOVED (default /tmp/h200-moved) so that the tree and the carried .device and .devwork/h200 stay under the
# device's 64 MiB; `back` restores them. Refuses to overwrite: a folder already on the other side stops it.
# Usage: bash bench/h200-move.sh out|back   (then `git status --short` should show nothing after `back`)
set -eu
cd "$(dirname "$0")/.."
M=${H200_MOVED:-/tmp/h200-moved}
DIRS=(public/model public/demo bench/evidence/results)
case "${1:-}" in
out)
  for d in "${DIRS[@]}"; do
    [ -e "$M/$d" ] && { echo "h200-move: $M/$d exists (a previous 'out' not brought back?)"; exit 1; }
  done
  for d in "${DIRS[@]}"; do mkdir -p "$M/$(dirname "$d")"; mv "$d" "$M/$d"; done
  echo "moved to $M: ${DIRS[*]}; tracked tree now $(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1) bytes on disk"
  ;;
back)
  for d in "${DIRS[@]}"; do
    [ -e "$d" ] && { echo "h200-move: $d is in the tree already"; exit 1; }
    [ -e "$M/$d" ] || { echo "h200-move: $M/$d is missing"; exit 1; }
  done
  for d in "${DIRS[@]}"; do mv "$M/$d" "$d"; done
  echo "back: ${DIRS[*]}"
  ;;
*) echo "usage: bash bench/h200-move.sh out|back"; exit 2 ;;
esac
