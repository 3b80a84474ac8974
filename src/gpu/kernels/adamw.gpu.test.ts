import { assert, assertClose, assertEquals } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { poison, readF32, requestGpu, sharedScratch, storageBuffer } from "../device.ts";
import { type AdamWHyper, encodeAdamW } from "./adamw.ts";
import { adamwRef } from "../../../tests/gpu-ref/adamw.ref.ts";
import { encodeGradNorm, gradNormPartialsBytes, gradStatsBuffer, readGradStats } from "./gradnorm.ts";
import { gradNormRef } from "../../../tests/gpu-ref/gradnorm.ref.ts";

const gpu = await requestGpu();
const { device } = gpu;

/** f32-exact hyperparameters, so the reference sees what the uniform holds. */
function f32hp(step: number): AdamWHyper {
  const f = Math.fround;
  return { lr: f(3e-3), beta1: f(0.9), beta2: f(0.999), eps: f(1e-8), weightDecay: f(0.05), step };
}

interface Tensor {
  param: Float32Array;
  m: Float32Array;
  v: Float32Array;
  grad: Float32Array;
}

function randomTensor(rng: Rng, n: number, gradScale: number): Tensor {
  return {
    param: rng.uniformArray(n),
    m: rng.uniformArray(n, -0.01, 0.01),
    v: rng.uniformArray(n, 0, 1e-4),
    grad: rng.uniformArray(n, -gradScale, gradScale),
  };
}

/** Runs gradnorm (when maxNorm is given) and one AdamW step per tensor; returns the GPU results. */
async function step(ts: Tensor[], hp: AdamWHyper, maxNorm?: number) {
  const bufs = ts.map((t) => ({
    param: storageBuffer(device, "param", t.param),
    grad: storageBuffer(device, "grad", t.grad),
    m: storageBuffer(device, "m", t.m),
    v: storageBuffer(device, "v", t.v),
    count: t.param.length,
  }));
  // Without a norm, the stats buffer's "no clip, finite" (gradStatsBuffer) as written.
  const stats = gradStatsBuffer(device);
  if (maxNorm !== undefined) poison(device, stats);
  const enc = device.createCommandEncoder({ label: "adamw-test" });
  // The partials' scratch, poisoned: every slot must be written by pass 1.
  poison(device, sharedScratch(device, "gradnorm-partials", gradNormPartialsBytes(ts.map((t) => t.param.length))));
  if (maxNorm !== undefined) {
    await encodeGradNorm(device, enc, bufs.map((b) => ({ buffer: b.grad, count: b.count })), stats, maxNorm);
  }
  for (const b of bufs) await encodeAdamW(device, enc, b, hp, stats);
  device.queue.submit([enc.finish()]);
  const out = [];
  for (const b of bufs) {
    out.push({ param: await readF32(device, b.param), m: await readF32(device, b.m), v: await readF32(device, b.v) });
    for (const x of [b.param, b.grad, b.m, b.v]) x.destroy();
  }
  const st = maxNorm === undefined ? undefined : await readGradStats(device, stats);
  stats.destroy();
  return { out, stats: st };
}

function compare(
  got: { param: Float32Array; m: Float32Array; v: Float32Array },
  want: ReturnType<typeof adamwRef>,
  name: string,
) {
  const ep = assertClose(got.param, want.param, { atol: 1e-7, rtol: 1e-5, name: `${name} param` });
  const em = assertClose(got.m, want.m, { atol: 1e-9, rtol: 1e-5, name: `${name} m` });
  const ev = assertClose(got.v, want.v, { atol: 1e-12, rtol: 1e-5, name: `${name} v` });
  console.log(
    `${name}: max|err| param ${ep.maxAbs.toExponential(2)} m ${em.maxAbs.toExponential(2)} v ${
      ev.maxAbs.toExponential(2)
    }`,
  );
}

Deno.test("adamw: three consecutive steps without clipping against the float64 reference, odd sizes", async () => {
  const rng = new Rng(201);
  for (const n of [1, 1003, 70001]) {
    const t = randomTensor(rng, n, 0.1);
    for (let s = 1; s <= 3; s++) {
      const { out } = await step([t], f32hp(s));
      compare(out[0], adamwRef(t.param, t.grad, t.m, t.v, f32hp(s)), `adamw n=${n} step ${s}`);
      t.param = out[0].param;
      t.m = out[0].m;
      t.v = out[0].v;
      t.grad = rng.uniformArray(n, -0.1, 0.1);
    }
  }
});

Deno.test("gradnorm + adamw: global norm over three buffers, clip applied on the GPU", async () => {
  const rng = new Rng(202);
  const ts = [randomTensor(rng, 1, 1), randomTensor(rng, 4099, 1), randomTensor(rng, 300001, 1)];
  for (const maxNorm of [1, 1e6, 0]) {
    const { out, stats } = await step(ts, f32hp(7), maxNorm);
    const ref = gradNormRef(ts.map((t) => t.grad), maxNorm);
    assert(stats !== undefined && !stats.nonFinite, "finite gradients flagged non-finite");
    const e = assertClose([stats.sumsq, stats.norm, stats.clip], [ref.sumsq, ref.norm, ref.clip], {
      atol: 0,
      rtol: 1e-5,
      name: `stats maxNorm=${maxNorm}`,
    });
    console.log(
      `gradnorm maxNorm=${maxNorm}: norm ${stats.norm} (ref ${ref.norm}), clip ${stats.clip}, max rel err ${
        e.maxRel.toExponential(2)
      }`,
    );
    ts.forEach((t, k) =>
      compare(
        out[k],
        adamwRef(t.param, t.grad, t.m, t.v, f32hp(7), ref.clip),
        `clipped adamw maxNorm=${maxNorm} tensor ${k}`,
      )
    );
  }
});

Deno.test("gradnorm + adamw: a NaN or Inf anywhere flags the step and leaves params, m and v untouched", async () => {
  const rng = new Rng(203);
  for (const bad of [NaN, Infinity, -Infinity]) {
    const ts = [randomTensor(rng, 513, 1), randomTensor(rng, 2000, 1)];
    ts[1].grad[1777] = bad;
    const { out, stats } = await step(ts, f32hp(3), 1);
    assert(stats?.nonFinite === true, `gradient ${bad} was not flagged`);
    ts.forEach((t, k) => {
      assertEquals(out[k].param, t.param, `param of tensor ${k} changed on a skipped step (${bad})`);
      assertEquals(out[k].m, t.m, `m of tensor ${k} changed on a skipped step (${bad})`);
      assertEquals(out[k].v, t.v, `v of tensor ${k} changed on a skipped step (${bad})`);
    });
  }
  // The overflowing sum of squares of finite gradients is flagged too.
  const big = [randomTensor(rng, 5, 1)];
  big[0].grad.fill(3e38);
  const { out, stats } = await step(big, f32hp(3), 1);
  assert(stats?.nonFinite === true, "overflowing norm was not flagged");
  assertEquals(out[0].param, big[0].param, "param changed although the norm overflowed");
});
