# Sourced by the one-call H200 scripts (bench/h200-split.sh, bench/h200-next.sh) from the checkout root with OUT
# set: unpacks the bundles of bash bench/h200-prep.sh once per machine into $R (J: the bundle folder), makes
# Dawn the engine, and defines
#   t NAME LIMIT CMD...   runs CMD under `timeout LIMIT` into $OUT/NAME.log and prints its rc, time and the
#                         lines matching $PAT (default: the step, table, profile and PyTorch lines), at most $HEAD (12);
#                         with TOTAL set (seconds for the whole script), the limit shrinks to what is left and a part
#                         with under 15 s left is skipped, so that what follows (pack) still runs inside one command
#   pack                  moves everything in $OUT but run.log into $OUT/results.tgz (the device returns 8 files)
: "${OUT:?h200-lib.sh: set OUT (an existing folder) before sourcing it}"
[ -d "$OUT" ] || { echo "h200-lib.sh: OUT=$OUT is not a folder"; exit 1; }
R=${H200_RUN_DIR:-/tmp/h200-run}
[ -d "$R" ] || { cp -r .devwork/h200 "$R" && find "$R" -name '*.gz' -exec gunzip -f {} +; }
J=$R/bin/a/b
export RLVR_WEBGPU=dawn
S0=$(date +%s)
t() {
  local n=$1 lim=$2; shift 2
  local s; s=$(date +%s)
  if [ -n "${TOTAL:-}" ]; then
    local left=$(( TOTAL - (s - S0) - 15 ))
    [ "$left" -lt 15 ] && { echo "== $n: skipped ($(( left + 15 )) s left of $TOTAL)"; return 0; }
    [ "$lim" -gt "$left" ] && lim=$left
  fi
  echo "== $n ($(( s - S0 )) s)"
  timeout -k 5 "$lim" "$@" > "$OUT/$n.log" 2>&1
  echo "   rc $? in $(( $(date +%s) - s )) s"
  grep -E "${PAT:-GRPO step|^\| [0-9]|== |GPU busy|PEFT|tokens/s}" "$OUT/$n.log" | grep -v "^{" | cut -c1-400 | head -"${HEAD:-12}"
}
pack() {
  ( cd "$OUT" && find . -mindepth 1 -maxdepth 1 ! -name run.log ! -name results.tgz -printf '%P\n' | tar czf results.tgz -T - \
    && find . -mindepth 1 -maxdepth 1 ! -name run.log ! -name results.tgz -exec rm -rf {} + )
}
