// Fused vocabulary head, forward pass 1 of 2: per row and per vocabulary slice, the online-softmax
// partials of z = scale * h W^T (max m, sum s = sum e^(z-m), sum e^(z-m) z, and the target's logit when it
// falls in the slice), so the (N, V) logits never exist. Each 16x16 workgroup owns 64 rows and VS
// columns of one window of W (a window keeps the binding under maxStorageBufferBindingSize); it
// walks its columns in 64x64 tiles (the matmul.wgsl scheme), each thread keeping running partials
// for its 4 rows, merged across the 16 threads of a row at the end. lmhead_combine.wgsl finishes.

// Dims, the bindings and the row merge (putMerge, rowMax, rowSum): after the kernel, at the end of this file.

const TS: u32 = 64u;
const TK: u32 = 16u;
const RT: u32 = 4u;

// (TK, TS) tiles as vec4 along TS, so a thread reads its 4 rows (or columns) in one load; each
// k-row padded to 17 vec4 so the loads (consecutive threads, consecutive k) hit different banks.
var<workgroup> tileA: array<vec4f, 272>; // h: element (k, m) at tileA[k * 17 + m / 4][m % 4]; then the merge scratch
var<workgroup> tileB: array<vec4f, 272>; // W: element (k, n) at tileB[k * 17 + n / 4][n % 4]

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let row0 = wg.y * TS;
  let tid = lid.y * 16u + lid.x;
  let c0 = wg.x * dims.VS;
  let cEnd = min(c0 + dims.VS, dims.vCount);
  var m: array<f32, 4>;
  var s: array<f32, 4>;
  var zs: array<f32, 4>;
  var zt: array<f32, 4>;
  var tgt: array<u32, 4>;
  for (var r = 0u; r < RT; r++) {
    m[r] = NEG;
    zt[r] = NEG;
    let row = row0 + lid.y * RT + r;
    tgt[r] = select(0xffffffffu, targets[min(row, dims.N - 1u)], row < dims.N);
  }
  for (var v0 = c0; v0 < cEnd; v0 += TS) {
    var acc: array<vec4f, 4>; // acc[r][q]: row lid.y * 4 + r, column v0 + lid.x * 4 + q
    for (var r = 0u; r < RT; r++) { acc[r] = vec4f(0.0); } // explicit: not every compiler re-zeroes a loop-local var
    for (var k0 = 0u; k0 < dims.C; k0 += TK) {
      for (var i = 0u; i < 4u; i++) {
        let e = tid + i * 256u;
        let kk = e % TK;
        let nn = e / TK;
        var a = 0.0;
        if (row0 + nn < dims.N && k0 + kk < dims.C) { a = h[(row0 + nn) * dims.C + k0 + kk]; }
        tileA[kk * 17u + nn / 4u][nn % 4u] = a;
        var b = 0.0;
        if (v0 + nn < cEnd && k0 + kk < dims.C) { b = w[(v0 + nn) * dims.C + k0 + kk]; }
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
      var mt = m[r];
      for (var q = 0u; q < RT; q++) {
        if (v0 + lid.x * RT + q < cEnd) { mt = max(mt, acc[r][q] * dims.scale); }
      }
      let alpha = exp(m[r] - mt);
      var sr = s[r] * alpha;
      var zr = zs[r] * alpha;
      for (var q = 0u; q < RT; q++) {
        let col = v0 + lid.x * RT + q;
        if (col < cEnd) {
          let z = acc[r][q] * dims.scale;
          let e = exp(z - mt);
          sr += e;
          zr = fma(e, z, zr);
          if (dims.vStart + col == tgt[r]) { zt[r] = z; }
        }
      }
      m[r] = mt;
      s[r] = sr;
      zs[r] = zr;
    }
  }
  // Merge the 16 threads of each row through tileA: max first, then the rescaled sums.
  var big: array<f32, 4>;
  for (var r = 0u; r < RT; r++) { putMerge(lid.y * RT + r, lid.x, m[r]); }
  workgroupBarrier();
  for (var r = 0u; r < RT; r++) { big[r] = rowMax(lid.y * RT + r); }
  workgroupBarrier();
  for (var r = 0u; r < RT; r++) { putMerge(lid.y * RT + r, lid.x, s[r] * exp(m[r] - big[r])); }
  workgroupBarrier();
  for (var r = 0u; r < RT; r++) { s[r] = rowSum(lid.y * RT + r); }
  workgroupBarrier();
  for (var r = 0u; r < RT; r++) { putMerge(lid.y * RT + r, lid.x, zs[r] * exp(m[r] - big[r])); }
  workgroupBarrier();
  for (var r = 0u; r < RT; r++) { zs[r] = rowSum(lid.y * RT + r); }
  workgroupBarrier();
  for (var r = 0u; r < RT; r++) { putMerge(lid.y * RT + r, lid.x, zt[r]); }
  workgroupBarrier();
  for (var r = 0u; r < RT; r++) { zt[r] = rowMax(lid.y * RT + r); }
  if (lid.x != 0u) { return; }
  for (var r = 0u; r < RT; r++) {
    let row = row0 + lid.y * RT + r;
    if (row >= dims.N) { continue; }
    let base = (row * dims.nSplit + dims.splitBase + wg.x) * 4u;
    part[base] = big[r];
    part[base + 1u] = s[r];
    part[base + 2u] = zs[r];
    part[base + 3u] = zt[r];
  }
}

// The merge of a row's running partials across the 16 threads of the row goes through workgroup memory: the kernel's
// tileA, at least 4 vec4 a row of its tile.

struct Dims {
  N: u32,
  C: u32,
  vStart: u32,    // vocabulary index of the window's first row
  vCount: u32,    // rows of W in the window
  VS: u32,        // columns per workgroup, a multiple of 64
  nSplit: u32,    // partials per row: ceil(V / VS)
  splitBase: u32, // vStart / VS
  scale: f32,     // logit multiplier (1 / temperature)
}

@group(0) @binding(0) var<storage, read> h: array<f32>;          // (N, C)
@group(0) @binding(1) var<storage, read> w: array<f32>;          // (vCount, C), rows vStart.. of W (V, C)
@group(0) @binding(2) var<storage, read> targets: array<u32>;    // (N)
@group(0) @binding(3) var<storage, read_write> part: array<f32>; // (N, nSplit, 4): m, s, sum e^(z-m) z, z_target
@group(0) @binding(4) var<uniform> dims: Dims;

const NEG: f32 = -1.0e30; // the running max before any logit, and the target's logit while unseen

// The merge scratch holds one value per (row i of the tile, thread j of 16) at flat index i * 16 + j.
fn putMerge(i: u32, j: u32, x: f32) {
  tileA[i * 4u + j / 4u][j % 4u] = x;
}

fn rowMax(i: u32) -> f32 {
  let a = max(tileA[i * 4u], tileA[i * 4u + 1u]);
  let b = max(tileA[i * 4u + 2u], tileA[i * 4u + 3u]);
  let c = max(a, b);
  return max(max(c.x, c.y), max(c.z, c.w));
}

fn rowSum(i: u32) -> f32 {
  let c = (tileA[i * 4u] + tileA[i * 4u + 1u]) + (tileA[i * 4u + 2u] + tileA[i * 4u + 3u]);
  return (c.x + c.y) + (c.z + c.w);
}
