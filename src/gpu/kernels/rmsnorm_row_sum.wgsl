// The sum of every thread's `s` over one row's workgroup, as `total` in every thread (included by rmsnorm_forward.wgsl
// and rmsnorm_backward.wgsl; `partial` is their workgroup array of WG floats). SUBGROUPS (devices with the `subgroups`
// feature): one barrier instead of log2(WG): subgroupAdd within each subgroup, one partial per subgroup, and every
// thread sums the partials in the same order (so every thread, and every run, gets the same value). The subgroup size
// is read, never assumed (4 on SwiftShader, 32 on NVIDIA, up to 128); subgroups are taken to be consecutive ranges of
// local_invocation_index, as the drivers lay them out. Otherwise a tree through workgroup memory.
// #if SUBGROUPS
let sg = subgroupAdd(s);
if (lane == 0u) { partial[t / sgSize] = sg; }
workgroupBarrier();
var total = 0.0;
for (var i = 0u; i < (WG + sgSize - 1u) / sgSize; i++) { total += partial[i]; }
// #else
partial[t] = s;
workgroupBarrier();
for (var k = WG / 2u; k > 0u; k >>= 1u) {
  if (t < k) { partial[t] += partial[t + k]; }
  workgroupBarrier();
}
let total = partial[0];
// #endif
