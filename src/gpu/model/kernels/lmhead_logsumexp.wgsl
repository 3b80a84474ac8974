// Streaming log-softmax statistics over one vocabulary chunk of logits, one thread per row: keeps
// the running max m, s = sum exp(z - m), s2 = sum exp(z - m) z and the target's logit, and writes
// after every chunk logp = z_tgt - lse, lse, and the entropy lse - s2 / s. After the last chunk
// they hold the values over the whole vocabulary, which is never materialised at once.
// Dimension letters: N rows, Vc columns of this chunk (vocabulary ids v0 .. v0 + Vc - 1).

struct Params {
  N: u32,
  Vc: u32,
  v0: u32,
  first: u32, // 1 on the first chunk: reset the running state
}

@group(0) @binding(0) var<storage, read> logits: array<f32>;     // (N, Vc)
@group(0) @binding(1) var<storage, read> tgt: array<u32>;        // (N)
@group(0) @binding(2) var<storage, read_write> st: array<f32>;   // (N, 4): m, s, s2, z_tgt
@group(0) @binding(3) var<storage, read_write> logp: array<f32>; // (N)
@group(0) @binding(4) var<storage, read_write> lse: array<f32>;  // (N)
@group(0) @binding(5) var<storage, read_write> ent: array<f32>;  // (N)
@group(0) @binding(6) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let n = gid.y * nwg.x * 64u + gid.x;
  if (n >= p.N) { return; }
  var m = -3.0e38;
  var s = 0.0;
  var s2 = 0.0;
  var zt = 0.0;
  if (p.first == 0u) {
    m = st[n * 4u];
    s = st[n * 4u + 1u];
    s2 = st[n * 4u + 2u];
    zt = st[n * 4u + 3u];
  }
  let row = n * p.Vc;
  var cm = m;
  for (var j = 0u; j < p.Vc; j++) { cm = max(cm, logits[row + j]); }
  let corr = exp(m - cm);
  s *= corr;
  s2 *= corr;
  for (var j = 0u; j < p.Vc; j++) {
    let z = logits[row + j];
    let e = exp(z - cm);
    s += e;
    s2 = fma(e, z, s2);
  }
  let tv = tgt[n];
  if (tv >= p.v0 && tv < p.v0 + p.Vc) { zt = logits[row + tv - p.v0]; }
  st[n * 4u] = cm;
  st[n * 4u + 1u] = s;
  st[n * 4u + 2u] = s2;
  st[n * 4u + 3u] = zt;
  let l = cm + log(s);
  lse[n] = l;
  logp[n] = zt - l;
  ent[n] = l - s2 / s;
}
