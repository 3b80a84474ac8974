#!/usr/bin/env bash
# On the GPU machine, from the repository root, after `source .device/remote-setup.sh`: runs one suite of bench/run.ts
# from the bundles of bench/device-prep.sh on Dawn, its record stamped with the commit the bundle was built at.
# Usage: bash bench/device.sh SUITE [key=value ...]     (DEVWORK=.devwork/device; the unpacked copy goes to $DEVICE_RUN)
set -u
H=${DEVWORK:-.devwork/device}
R=${DEVICE_RUN:-/tmp/device-run}
if [ ! -d "$R" ]; then
  cp -r "$H" "$R" && find "$R" -name '*.gz' -exec gunzip -f {} +
  [ -f "$R/demo.tar.xz" ] && tar -C "$R" -xJf "$R/demo.tar.xz"
fi
[ -d /usr/local/nvidia/lib64 ] && export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
export RLVR_WEBGPU=${RLVR_WEBGPU:-dawn}
# Unrounded timestamp queries for the products suite.
export RLVR_DAWN_OPTIONS=${RLVR_DAWN_OPTIONS:-"disable-dawn-features=timestamp_quantization"}
BENCH_COMMIT=${BENCH_COMMIT:-$(cat "$R/commit")} exec deno run -A "$R/bin/a/b/run.js" "$@"
