// The query kernels' (attention_rb.wgsl, attention_bwd_dq_rb.wgsl) roles of a workgroup and its threads, included at
// the top of main: (b, h) and the first query row q0 of the workgroup, the kv head and the sequence's length; a
// thread's slot in the score phase and in the sums. SK (key slots of the score phase) is the kernel's.
let b = wg.z;
let h = wg.y;
let q0 = wg.x * BQ;
let hk = h / (dims.H / dims.Hkv);
let len = min(lens[b], dims.T);
// Score phase: SK key slots fastest (8 threads of a 128-bit load phase read 8 different k rows, one q row).
let SQ = BQ / QR;
let kp = tid % SK;
let qp = tid / SK;
// Sums: 16 column lanes fastest, queries 4 qg .. 4 qg + 3.
let c = tid % LANES;
let qg = tid / LANES;
let cA = c < D4;
let cB = JMAX > 1u && c + LANES < D4;
