// First pass of the embedding backward: for every row n, the next row with the same id (or END)
// and whether n is the first row holding its id. The second pass walks these chains, so each
// table row is summed by one thread per channel in row order: deterministic, no float atomics.
// Dimension letters: N rows (batch*tokens).

struct Params {
  N: u32,
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
}

@group(0) @binding(0) var<storage, read> ids: array<u32>;          // (N)
@group(0) @binding(1) var<storage, read_write> links: array<u32>;  // (N): next | FIRST
@group(0) @binding(2) var<uniform> p: Params;

override WG: u32 = 256u;

const FIRST: u32 = 0x80000000u; // set when no earlier row has the same id
const END: u32 = 0x7fffffffu;   // no later row has the same id

var<workgroup> tile: array<u32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  let n = (wg.y * nwg.x + wg.x) * WG + t;
  let inRange = n < p.N;
  var id = 0u;
  if (inRange) { id = ids[n]; }
  var first = true;
  var next = END;
  // The whole workgroup steps through ids one tile at a time, so loads are coalesced and shared.
  for (var m0 = 0u; m0 < p.N; m0 += WG) {
    if (m0 + t < p.N) { tile[t] = ids[m0 + t]; }
    workgroupBarrier();
    let len = min(WG, p.N - m0);
    for (var j = 0u; j < len; j++) {
      let m = m0 + j;
      if (tile[j] == id) {
        if (m < n) { first = false; }
        if (m > n && next == END) { next = m; }
      }
    }
    workgroupBarrier();
  }
  if (inRange) { links[n] = next | select(0u, FIRST, first); }
}
