// The captured decoder's cache load (model/captured.ts): row r of the decoding cache gets row rows[r].src of
// the prefill cache, its last rows[r].len columns (the prompt, left-padded there) moved to columns 0..len-1,
// for every KV head (or its first len columns, where the prefill wrote rows from column 0: `from0`, the
// captured prefill's right-padded rows); one dispatch per layer's key or value tensor instead of a buffer copy per (row, head).
// Columns at and past len are left as they are (the decoder never reads them: GQA reads seqlens_k + 1 keys).
// Dimension letters: R prefill rows, B decoding rows (N of them loaded), K KV heads, P prefill columns,
// T the decoding cache's columns (maxT), D head dim. Exact (f32 moves).

struct Params {
  N: u32,  // rows loaded (rows.length)
  K: u32,
  P: u32,
  T: u32,
  D: u32,
  from0: u32,  // 1: the prompt is in columns 0..len-1 of its prefill row, 0: in columns P-len..P-1
  _pad1: u32,
  _pad2: u32,
}

@group(0) @binding(0) var<storage, read> src: array<f32>;         // (R, K, P, D) the prefill's present.*
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;   // (B, K, T, D) the captured past / present
@group(0) @binding(2) var<storage, read> rows: array<u32>;        // (N, 2): source row, prompt length
@group(0) @binding(3) var<uniform> p: Params;

// x: element c * D + d of a row's len * D copied values (256 a workgroup, several workgroups along x);
// y: r * K + k.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let rk = gid.y;
  if (rk >= p.N * p.K) { return; }
  let r = rk / p.K;
  let k = rk % p.K;
  let s = rows[2u * r];
  let len = rows[2u * r + 1u];
  let i = gid.x;
  if (i >= len * p.D) { return; }
  let first = select(p.P - len, 0u, p.from0 == 1u);
  dst[(r * p.K + k) * p.T * p.D + i] = src[((s * p.K + k) * p.P + first) * p.D + i];
}
