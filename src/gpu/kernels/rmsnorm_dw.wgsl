// RMSNorm backward to the weight, pass 1: out[s, c] = sum over the rows of slice s of
// dy[r, c] * x[r, c] * rstd[r] (+ out[s, c] when ACCUMULATE). With one slice, out is dw itself;
// with S slices, out is a (S, C) scratch that rmsnorm_dw_reduce.wgsl sums in slice order.
// Each workgroup owns 64 columns of one slice; its 4 row lanes are summed in a fixed order, so
// the result is deterministic. Dimension letters: R rows, C channels, S row slices.

struct Params {
  rows: u32,          // R
  C: u32,
  rowsPerSlice: u32,
  _pad: u32,
}

@group(0) @binding(0) var<storage, read> dy: array<f32>;        // (R, C)
@group(0) @binding(1) var<storage, read> x: array<f32>;         // (R, C)
@group(0) @binding(2) var<storage, read> rstd: array<f32>;      // (R)
@group(0) @binding(3) var<storage, read_write> out: array<f32>; // (S, C): dw when S = 1
@group(0) @binding(4) var<uniform> p: Params;

override ACCUMULATE: bool = false;

const COLS: u32 = 64u;  // columns per workgroup (threads along x, adjacent in memory)
const LANES: u32 = 4u;  // row lanes per workgroup (threads along y)

var<workgroup> partial: array<f32, 256>; // (LANES, COLS)

@compute @workgroup_size(64, 4)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let c = wg.x * COLS + lid.x;
  let r0 = wg.y * p.rowsPerSlice;
  let r1 = min(r0 + p.rowsPerSlice, p.rows);
  var s = 0.0;
  if (c < p.C) {
    for (var r = r0 + lid.y; r < r1; r += LANES) {
      s = fma(dy[r * p.C + c] * x[r * p.C + c], rstd[r], s);
    }
  }
  partial[lid.y * COLS + lid.x] = s;
  workgroupBarrier();
  if (lid.y == 0u && c < p.C) {
    var v = (partial[lid.x] + partial[COLS + lid.x]) + (partial[2u * COLS + lid.x] + partial[3u * COLS + lid.x]);
    let o = wg.y * p.C + c;
    if (ACCUMULATE) { v += out[o]; }
    out[o] = v;
  }
}
