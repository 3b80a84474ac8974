import { assert, assertClose, assertRejects, assertSameBits } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { poison, readF32, requestGpu, storageBuffer } from "../device.ts";
import {
  type AttentionOpts,
  blockedTiles,
  DQ_SCRATCH_CAP,
  dqScratchBytes,
  encodeAttentionBackward,
  encodeAttentionForward,
  forwardBlockedWords,
} from "./attention.ts";
import { attentionBackwardRef, type AttentionDims, attentionForwardRef } from "../../../tests/gpu-ref/attention.ref.ts";

const gpu = await requestGpu();

interface Inputs {
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
  dout: Float32Array;
}

function randomInputs(a: AttentionDims, seed: number): Inputs {
  const rng = new Rng(seed);
  return {
    q: rng.uniformArray(a.B * a.T * a.H * a.D, -2, 2),
    k: rng.uniformArray(a.B * a.T * a.Hkv * a.D, -2, 2),
    v: rng.uniformArray(a.B * a.T * a.Hkv * a.D),
    dout: rng.uniformArray(a.B * a.T * a.H * a.D),
  };
}

/** Runs forward and backward on the GPU with every output poisoned first. */
async function run(a: AttentionDims, x: Inputs, lens: number[], opts: AttentionOpts = {}) {
  const { device } = gpu;
  const b = {
    q: storageBuffer(device, "q", x.q),
    k: storageBuffer(device, "k", x.k),
    v: storageBuffer(device, "v", x.v),
    dout: storageBuffer(device, "dout", x.dout),
    lens: storageBuffer(device, "lens", new Uint32Array(lens)),
    o: storageBuffer(device, "o", x.q.byteLength),
    lse: storageBuffer(device, "lse", a.B * a.H * a.T * 4),
    delta: storageBuffer(device, "delta", a.B * a.H * a.T * 4),
    dq: storageBuffer(device, "dq", x.q.byteLength),
    dk: storageBuffer(device, "dk", x.k.byteLength),
    dv: storageBuffer(device, "dv", x.v.byteLength),
  };
  for (const p of [b.o, b.lse, b.delta, b.dq, b.dk, b.dv]) poison(device, p);
  const enc = device.createCommandEncoder({ label: "attention-test" });
  await encodeAttentionForward(device, enc, b, a, opts);
  await encodeAttentionBackward(device, enc, b, a, opts);
  device.queue.submit([enc.finish()]);
  const out = {
    o: await readF32(device, b.o),
    lse: await readF32(device, b.lse),
    delta: await readF32(device, b.delta),
    dq: await readF32(device, b.dq),
    dk: await readF32(device, b.dk),
    dv: await readF32(device, b.dv),
  };
  for (const g of Object.values(b)) g.destroy();
  return out;
}

async function check(a: AttentionDims, lens: number[], seed: number, opts: AttentionOpts = {}) {
  const x = randomInputs(a, seed);
  const got = await run(a, x, lens, opts);
  const want = attentionForwardRef(x.q, x.k, x.v, lens, a);
  const grad = attentionBackwardRef(x.q, x.k, x.v, lens, x.dout, a);
  const tag = `${JSON.stringify(a)} lens ${lens}${opts.workgroupBytes ? ` workgroup ${opts.workgroupBytes} B` : ""}`;
  const delta = new Float64Array(a.B * a.H * a.T); // (B, H, T) rowsum(dout * o), from the reference o
  for (let i = 0; i < want.o.length; i++) {
    const d = i % a.D;
    const h = ((i - d) / a.D) % a.H;
    const bt = Math.floor(i / (a.D * a.H));
    delta[(Math.floor(bt / a.T) * a.H + h) * a.T + (bt % a.T)] += x.dout[i] * want.o[i];
  }
  assertClose(got.delta, delta, { atol: 2e-5, rtol: 1e-4, name: `delta ${tag}` });
  const tol = { atol: 2e-5, rtol: 1e-4 };
  const errs = [
    assertClose(got.o, want.o, { ...tol, name: `o ${tag}` }),
    assertClose(got.lse, want.lse, { ...tol, name: `lse ${tag}` }),
    assertClose(got.dq, grad.dq, { ...tol, atol: 1e-4, name: `dq ${tag}` }),
    assertClose(got.dk, grad.dk, { ...tol, atol: 1e-4, name: `dk ${tag}` }),
    assertClose(got.dv, grad.dv, { ...tol, atol: 1e-4, name: `dv ${tag}` }),
  ].map((e) => e.maxAbs.toExponential(2));
  console.log(`${tag}: max |err| o ${errs[0]} lse ${errs[1]} dq ${errs[2]} dk ${errs[3]} dv ${errs[4]}`);
}

type Case = readonly [AttentionDims, readonly number[], number, AttentionOpts?];
const ODD_CASES: readonly Case[] = [
  [{ B: 1, T: 1, H: 1, Hkv: 1, D: 1 }, [1], 1],
  [{ B: 2, T: 37, H: 4, Hkv: 2, D: 24 }, [37, 20], 2],
  [{ B: 3, T: 45, H: 6, Hkv: 1, D: 5 }, [45, 17, 1], 3],
  [{ B: 2, T: 33, H: 2, Hkv: 2, D: 64 }, [30, 33], 4],
  [{ B: 1, T: 21, H: 4, Hkv: 2, D: 128 }, [19], 5],
  [{ B: 1, T: 70, H: 3, Hkv: 3, D: 100 }, [70], 6],
  [{ B: 3, T: 9, H: 2, Hkv: 1, D: 8 }, [0, 9, 12], 12], // an empty sequence; a length past T
];
const SMALL_MEMORY_CASES: readonly Case[] = [
  [{ B: 2, T: 40, H: 4, Hkv: 1, D: 128 }, [40, 23], 7, { workgroupBytes: 16384 }],
  [{ B: 1, T: 29, H: 2, Hkv: 2, D: 96 }, [29], 8, { workgroupBytes: 8192 }],
];

Deno.test("attention forward and backward: odd sizes, GQA, ragged lengths, against float64", async () => {
  for (const [a, lens, seed, opts] of ODD_CASES) await check(a, [...lens], seed, opts);
});

Deno.test("attention: the smaller tiles a 16 KiB (or 8 KiB) workgroup-memory device gets", async () => {
  for (const [a, lens, seed, opts] of SMALL_MEMORY_CASES) await check(a, [...lens], seed, opts);
});

/** The padding test of one backward variant: padded inputs never reach valid outputs and padded rows get zero gradient. */
async function checkPadding() {
  const a: AttentionDims = { B: 2, T: 29, H: 4, Hkv: 2, D: 32 };
  const lens = [29, 11];
  const x = randomInputs(a, 9);
  const y = { q: x.q.slice(), k: x.k.slice(), v: x.v.slice(), dout: x.dout.slice() };
  // Fill sequence 1's padding (t >= 11) with large garbage in every input.
  const rng = new Rng(10);
  for (const [arr, heads] of [[y.q, a.H], [y.k, a.Hkv], [y.v, a.Hkv], [y.dout, a.H]] as const) {
    for (let i = (a.T + lens[1]) * heads * a.D; i < 2 * a.T * heads * a.D; i++) arr[i] = 1e3 * rng.normal();
  }
  const r1 = await run(a, x, lens);
  const r2 = await run(a, y, lens);
  for (const key of ["o", "lse", "dq", "dk", "dv"] as const) {
    assert(r1[key].every((v, i) => v === r2[key][i]), `${key} changed with the padding's contents`);
  }
  const padK = (a.T + lens[1]) * a.Hkv * a.D;
  assert(
    r2.dk.subarray(padK).every((v) => v === 0) && r2.dv.subarray(padK).every((v) => v === 0),
    "padded dk/dv are not zero",
  );
  const padQ = (a.T + lens[1]) * a.H * a.D;
  assert(
    r2.o.subarray(padQ).every((v) => v === 0) && r2.dq.subarray(padQ).every((v) => v === 0),
    "padded o/dq are not zero",
  );
}

Deno.test("attention: padded positions do not change valid outputs, and receive zero gradient", checkPadding);

/** The tiles and thread blocks below the widest, and the demo's shape at a longer T (several tiles, three heads a group). */
const BLOCKED_CASES: readonly Case[] = [
  // dk/dv: 16 KiB at D 64 (16, 8), 8 KiB at D 32 (8, 8) and D 64 (8, 4), 4 KiB (4, 4). The blocked forward (query rows,
  // key tile): (32, 16) at D <= 64 with 32 KiB, (32, 8) at D 128 and at 16 KiB with D 64, (16, 8) at 8 KiB with D 32 and
  // 4 KiB with D 16, (8, 8) at 16 KiB with D 128 and 8 KiB with D 64, (8, 4) at 8 KiB with D 96; below: (16, 16) and (4, 4).
  [{ B: 2, T: 57, H: 6, Hkv: 2, D: 64 }, [57, 40], 41, { workgroupBytes: 16384 }],
  [{ B: 1, T: 37, H: 2, Hkv: 1, D: 32 }, [37], 42, { workgroupBytes: 8192 }],
  [{ B: 1, T: 30, H: 2, Hkv: 2, D: 64 }, [27], 43, { workgroupBytes: 8192 }],
  [{ B: 1, T: 19, H: 3, Hkv: 1, D: 16 }, [19], 44, { workgroupBytes: 4096 }],
  [{ B: 2, T: 131, H: 6, Hkv: 2, D: 64 }, [131, 77], 45],
  [{ B: 1, T: 41, H: 2, Hkv: 1, D: 32 }, [38], 46, { workgroupBytes: 9216 }],
  [{ B: 2, T: 13, H: 2, Hkv: 2, D: 64 }, [13, 6], 47, { workgroupBytes: 4608 }],
  [{ B: 1, T: 75, H: 4, Hkv: 2, D: 128 }, [71], 48],
];

/** The odd, small-memory and blocked cases against float64 (with `extra` options), then the padding check. */
async function checkEveryCase(extra: AttentionOpts = {}) {
  for (const [a, lens, seed, opts] of [...ODD_CASES, ...SMALL_MEMORY_CASES, ...BLOCKED_CASES]) {
    await check(a, [...lens], seed, { ...opts, ...extra });
  }
  await checkPadding();
}

Deno.test("attention backward on the register-blocked kernels with the dq kernel (where the fused dq's scratch would not fit): the same cases against float64", async () => {
  await checkEveryCase({ dqScratchBytes: 0 });
  if (gpu.device.limits.maxComputeWorkgroupStorageSize >= 32768) {
    // The demo's D = 64 with 32 KiB: dq 32 query rows x 16-key tiles (128 threads), dk/dv 32 keys x 16-query tiles.
    const dq = blockedTiles(gpu.device, 64, (own, tile, s) => 2 * own * s + 2 * tile * s + own * tile + 2 * own);
    const kv = blockedTiles(gpu.device, 64, (own, tile, s) => 2 * own * s + 2 * tile * s + 2 * own * tile + 2 * tile);
    assert(
      dq.own === 32 && dq.tile === 16 && kv.own === 32 && kv.tile === 16 && kv.fOwn === 2 && kv.fTile === 2,
      JSON.stringify([dq, kv]),
    );
  }
});

Deno.test("attention on the register-blocked kernels (D % 4 != 0 widened to 4), dq fused: every case against float64", async () => {
  await checkEveryCase();
  if (gpu.device.limits.maxComputeWorkgroupStorageSize >= 32768) {
    // The demo's D = 64 with 32 KiB: 32 query rows x 16-key tiles, 2 x 2 scores a thread (128 threads, 20.6 KiB).
    const f = blockedTiles(gpu.device, 64, forwardBlockedWords);
    assert(f.own === 32 && f.tile === 16 && f.fOwn === 2 && f.fTile === 2 && f.JMAX === 1, JSON.stringify(f));
    assert(forwardBlockedWords(32, 16, 68) * 4 === 21120, `${forwardBlockedWords(32, 16, 68) * 4} bytes`);
  }
});

Deno.test("attention: a buffer smaller than its shape is rejected before anything is recorded", async () => {
  const { device } = gpu;
  const a: AttentionDims = { B: 2, T: 8, H: 2, Hkv: 1, D: 16 };
  const x = randomInputs(a, 11);
  const b = {
    q: storageBuffer(device, "q", x.q),
    k: storageBuffer(device, "k-short", x.k.subarray(0, x.k.length / 2)),
    v: storageBuffer(device, "v", x.v),
    lens: storageBuffer(device, "lens", new Uint32Array([8, 8])),
    o: storageBuffer(device, "o", x.q.byteLength),
    lse: storageBuffer(device, "lse", a.B * a.H * a.T * 4),
  };
  const enc = device.createCommandEncoder({ label: "attention-size-check" });
  await assertRejects(
    () => encodeAttentionForward(device, enc, b, a),
    /attention: k \(k-short\) has 512 bytes, needs 1024/,
  );
  for (const g of Object.values(b)) g.destroy();
});

Deno.test("attention backward with dq fused into the dk/dv kernel: dk/dv/delta against the dq kernel's path (past the scratch cap), dq within rounding", async () => {
  // The scratch holds block kb's rows t >= kb BK: T + (T - BK) + ... rows of B H D floats; the 0.5B step's and
  // pretraining's shapes fit the default cap.
  assert(dqScratchBytes({ B: 2, T: 70, H: 3, Hkv: 1, D: 64 }, 32) === (70 + 38 + 6) * 2 * 3 * 64 * 4, "scratch bytes");
  assert(
    dqScratchBytes({ B: 16, T: 1024, H: 6, Hkv: 2, D: 64 }, 32) <= DQ_SCRATCH_CAP &&
      dqScratchBytes({ B: 8, T: 768, H: 14, Hkv: 2, D: 64 }, 32) <= DQ_SCRATCH_CAP,
    "cap",
  );
  for (
    const [a, lens, seed, opts] of [
      [{ B: 2, T: 131, H: 6, Hkv: 2, D: 64 }, [131, 77], 51, {}],
      [{ B: 1, T: 41, H: 4, Hkv: 1, D: 32 }, [38], 52, { workgroupBytes: 8192 }],
    ] as const
  ) {
    const x = randomInputs(a, seed);
    const fused = await run(a, x, [...lens], opts);
    // A cap below the scratch's bytes: the dq kernel runs instead.
    const kernel = await run(a, x, [...lens], { ...opts, dqScratchBytes: 1024 });
    let dqDiff = 0;
    for (let i = 0; i < kernel.dq.length; i++) dqDiff = Math.max(dqDiff, Math.abs(fused.dq[i] - kernel.dq[i]));
    const same = (["dk", "dv", "delta"] as const).map((n) => fused[n].every((v, i) => Object.is(v, kernel[n][i])));
    console.log(
      `${JSON.stringify(a)}: fused dq within ${
        dqDiff.toExponential(2)
      } of the dq kernel's; dk, dv, delta bitwise equal: ${same.join(", ")}`,
    );
    assert(dqDiff < 1e-4, `fused dq differs by ${dqDiff}`);
  }
});

/**
 * Records the labels of the pipelines the device creates from now on, to see that a switched kernel ran (computePipeline
 * caches by source and constants, so a label shows up once per device); `restore` undoes it.
 */
function watchPipelineLabels(device: GPUDevice): { labels: string[]; restore: () => void } {
  const labels: string[] = [];
  const create = device.createComputePipelineAsync;
  device.createComputePipelineAsync = (d: GPUComputePipelineDescriptor) => {
    labels.push(d.label ?? "");
    return create.call(device, d);
  };
  return {
    labels,
    restore: () => {
      device.createComputePipelineAsync = create;
    },
  };
}

Deno.test("attention backward with a workgroup per query head of the dk/dv kernel and a reduce over the group: the split kernels run; the partials take two windows of the split-K scratch", async () => {
  const { device } = gpu;
  const { labels, restore } = watchPipelineLabels(device);
  try {
    // Groups of 3, 4 and 7 heads (the 0.5B's), one of 1 (Hkv = H: nothing to split); fused dq and the dq kernel.
    for (
      const [a, lens, seed, opts] of [
        [{ B: 2, T: 131, H: 6, Hkv: 2, D: 64 }, [131, 77], 71, {}],
        [{ B: 1, T: 41, H: 4, Hkv: 1, D: 32 }, [38], 72, { workgroupBytes: 8192 }],
        [{ B: 2, T: 50, H: 14, Hkv: 2, D: 64 }, [50, 33], 73, {}],
        [{ B: 1, T: 33, H: 2, Hkv: 2, D: 64 }, [30], 74, {}],
      ] as const
    ) {
      await check(a, [...lens], seed, opts);
      await check(a, [...lens], seed, { ...opts, dqScratchBytes: 0 });
    }
    for (
      const l of [
        "attention-backward-dkv-dqp-split",
        "attention-backward-dkv-blocked-split",
        "attention-backward-dkv-reduce",
      ]
    ) {
      assert(labels.includes(l), `${l} was not created (${[...new Set(labels)].join(", ")})`);
    }
    // The partials take two windows of the split-K scratch, no buffer of their own: with the scratch already large enough
    // (as the 0.5B step's products leave it), the dk/dv kernel and the reduce bind it twice, and it stays the same buffer.
    const { scratchBuffer } = await import("./matmul.ts");
    const a = { B: 2, T: 50, H: 14, Hkv: 2, D: 64 };
    const scratch = scratchBuffer(
      device,
      Math.max(scratchBuffer(device, 0).size + 4096, 2 * a.B * a.T * a.Hkv * 7 * a.D * 4 + 4096),
    ); // a new one
    let twice = 0;
    const createBindGroup = device.createBindGroup;
    device.createBindGroup = (d: GPUBindGroupDescriptor) => {
      if ([...d.entries].filter((e) => (e.resource as GPUBufferBinding).buffer === scratch).length === 2) twice++;
      return createBindGroup.call(device, d);
    };
    try {
      await run(a, randomInputs(a, 75), [50, 33], {});
    } finally {
      device.createBindGroup = createBindGroup;
    }
    assert(scratchBuffer(device, 0) === scratch, "the split-K scratch was replaced");
    assert(
      twice === 2,
      `bind groups with the split-K scratch as both dk and dv partials: ${twice}, want 2 (the dk/dv kernel's, the reduce's)`,
    );
  } finally {
    restore();
  }
});
