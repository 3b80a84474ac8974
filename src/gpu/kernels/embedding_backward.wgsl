// Second pass of the embedding backward: dtable[ids[n] - v0, c] += sum of dy[m, c] over the rows m
// sharing that id, summed in row order by the thread of the id's first row. dtable holds the
// vocabulary rows [v0, v0 + V) (the whole vocabulary when v0 = 0, or one chunk of it when the
// whole does not fit a binding); ids outside that range are ignored. Rows no id touches are left
// as they were (the caller zeroes dtable at the start of a step).
// Dimension letters: N rows, V vocabulary rows of this dtable, C channels.

struct Params {
  N: u32,
  C: u32,
  V: u32,
  v0: u32,
}

@group(0) @binding(0) var<storage, read> ids: array<u32>;           // (N)
@group(0) @binding(1) var<storage, read> links: array<u32>;         // (N), from embedding_links
@group(0) @binding(2) var<storage, read> dy: array<f32>;            // (N, C)
@group(0) @binding(3) var<storage, read_write> dtable: array<f32>;  // (V, C), vocabulary rows v0..v0+V
@group(0) @binding(4) var<uniform> p: Params;

override WG: u32 = 256u;

const FIRST: u32 = 0x80000000u;
const END: u32 = 0x7fffffffu;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  let i = (wg.y * nwg.x + wg.x) * WG + t; // flat index over (N, C)
  if (i >= p.N * p.C) { return; }
  let n = i / p.C;
  let c = i % p.C;
  let head = links[n];
  let id = ids[n];
  if ((head & FIRST) == 0u || id < p.v0 || id - p.v0 >= p.V) { return; }
  var s = dy[i];
  var m = head & END;
  while (m != END) {
    s += dy[m * p.C + c];
    m = links[m] & END;
  }
  dtable[(id - p.v0) * p.C + c] += s;
}
