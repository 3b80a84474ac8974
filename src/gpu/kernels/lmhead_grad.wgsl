// Fused vocabulary head, backward: the logit gradient of one vocabulary chunk,
//   dz (N, vCount) = g (1[v = t] - p) - gEnt p (z - lse + entropy),  p = exp(z - lse),
// recomputing z = scale * h W^T for the chunk (the matmul.wgsl tiling, 64x64 per 16x16 workgroup).
// The wrapper then forms dh += scale dz W_chunk and dW_chunk = scale dz^T h with matmul.wgsl.
// Rows with a target >= V are ignored by the logp term (they still get the entropy term).

// Dims, the bindings and HAS_ENT: lmhead_grad_common.wgsl, appended by lmhead.ts.

const TS: u32 = 64u;
const TK: u32 = 16u;
const RT: u32 = 4u;

// (TK, TS) tiles as vec4 along TS, so a thread reads its 4 rows (or columns) in one load; each
// k-row padded to 17 vec4 so the loads (consecutive threads, consecutive k) hit different banks.
var<workgroup> tileA: array<vec4f, 272>; // h: element (k, m) at tileA[k * 17 + m / 4][m % 4]
var<workgroup> tileB: array<vec4f, 272>; // W: element (k, n) at tileB[k * 17 + n / 4][n % 4]

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let row0 = wg.y * TS;
  let col0 = wg.x * TS;
  let tid = lid.y * 16u + lid.x;
  var acc: array<vec4f, 4>; // acc[r][q]: row lid.y * 4 + r, column lid.x * 4 + q
  for (var k0 = 0u; k0 < dims.C; k0 += TK) {
    for (var i = 0u; i < 4u; i++) {
      let e = tid + i * 256u;
      let kk = e % TK;
      let nn = e / TK;
      var a = 0.0;
      if (row0 + nn < dims.N && k0 + kk < dims.C) { a = h[(row0 + nn) * dims.C + k0 + kk]; }
      tileA[kk * 17u + nn / 4u][nn % 4u] = a;
      var b = 0.0;
      if (col0 + nn < dims.vCount && k0 + kk < dims.C) { b = w[(col0 + nn) * dims.C + k0 + kk]; }
      tileB[kk * 17u + nn / 4u][nn % 4u] = b;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < TK; kk++) {
      let av = tileA[kk * 17u + lid.y];
      let bv = tileB[kk * 17u + lid.x];
      for (var r = 0u; r < RT; r++) { acc[r] = fma(vec4f(av[r]), bv, acc[r]); }
    }
    workgroupBarrier();
  }
  for (var r = 0u; r < RT; r++) {
    let row = row0 + lid.y * RT + r;
    if (row >= dims.N) { continue; }
    let t = targets[row];
    let l = lse[row];
    let gr = select(0.0, g[row], t < dims.V);
    var ent = 0.0;
    var ge = 0.0;
    if (HAS_ENT) {
      ent = entropy[row];
      ge = gEnt[row];
    }
    for (var q = 0u; q < RT; q++) {
      let col = col0 + lid.x * RT + q;
      if (col >= dims.vCount) { continue; }
      let z = acc[r][q] * dims.scale;
      let p = exp(z - l);
      var d = gr * (select(0.0, 1.0, dims.vStart + col == t) - p);
      if (HAS_ENT) { d -= ge * p * (z - l + ent); }
      dz[row * dims.vCount + col] = d;
    }
  }
}
