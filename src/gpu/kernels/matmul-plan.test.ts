// The matmul plan without a GPU: shape -> kernel, transpose, tiles (grid), K slices, Dims, vec4 loads and stores.
import { assert, assertEquals } from "../../../tests/assert.ts";
import { setPerfSwitches } from "../switches.ts";
import {
  type EncodeMatmulOpts,
  type MatmulVariant,
  pickMatmul,
  planMatmul,
  splitKSlices,
  storesVec4,
  tailFused,
  tileStep,
  vecLoads,
} from "./matmul-plan.ts";

const tail = { a: { size: 6144 * 16 * 4 } as GPUBuffer, b: { size: 896 * 16 * 4 } as GPUBuffer, r: 16, scale: 2 };

Deno.test("matmul plan: the kernel chosen per shape (LoRA rank products narrow, projections tile96h, short K tile64)", () => {
  const pick = (o: EncodeMatmulOpts): [MatmulVariant, boolean] => {
    const p = pickMatmul(o);
    return [p.variant, p.swap];
  };
  assertEquals(pick({ M: 6144, N: 896, K: 896, transB: true }), ["tile96h", false], "x W^T");
  assertEquals(pick({ M: 6144, N: 16, K: 896, transB: true }), ["narrow", false], "x A^T (N = r)");
  assertEquals(pick({ M: 16, N: 896, K: 6144, transA: true }), ["narrow", true], "dA = (dy B)^T x (M = r)");
  assertEquals(pick({ M: 100, N: 70, K: 64 }), ["tile64", false], "small f32");
  assertEquals(pick({ M: 6144, N: 896, K: 128 }), ["tile64", false], "k/v dx (K = 128)");
  assertEquals(pick({ M: 6144, N: 896, K: 129 }), ["tile96h", false], "K = 129");
  assertEquals(pick({ M: 6144, N: 896, K: 128, tail }), ["tile96h", false], "k/v dx with its LoRA tail inside");
  assertEquals(
    pick({ M: 6144, N: 896, K: 128, tail, alpha: 0.5 }),
    ["tile64", false],
    "a tail that cannot run inside (alpha != 1)",
  );
  assert(
    tailFused({ M: 6144, N: 896, K: 896, tail }) && !tailFused({ M: 6144, N: 896, K: 896, transA: true, tail }),
    "tail inside unless A is transposed",
  );
});

Deno.test("matmul plan: grids, K slices and Dims of the 0.5B step's products at the default knobs", () => {
  const prev = setPerfSwitches({ wideSplit: 7, narrowWg: 1024, narrowMinK: 128 });
  try {
    // [product, grid, slices]: the 896-wide projections (7 x 64 tiles of 96 x 128: under WIDE_SPLIT_TILES) split 7 ways
    // at K >= 1792 (slices of at least 256); the 4864-wide ones do not; the rank products on the narrow kernel.
    const cases: [EncodeMatmulOpts, [number, number, number], number][] = [
      [{ M: 6144, N: 896, K: 896, transB: true }, [7, 64, 3], 3],
      [{ M: 6144, N: 896, K: 4864 }, [7, 64, 7], 7],
      [{ M: 6144, N: 4864, K: 896, transB: true }, [38, 64, 1], 1],
      [{ M: 6144, N: 16, K: 896, transB: true }, [1, 96, 7], 7],
      [{ M: 16, N: 896, K: 6144, transA: true }, [1, 14, 48], 48],
    ];
    for (const [o, grid, slices] of cases) {
      const p = planMatmul(o, 0, 0);
      assertEquals(p.grid, grid, `grid of ${JSON.stringify(o)}`);
      assertEquals([p.slices, splitKSlices(o)], [slices, slices], `slices of ${JSON.stringify(o)}`);
    }
    // Dims: M, N, the slice length (a multiple of 16), alpha 1 when split (the reduce applies it), strides, kTotal.
    const d = planMatmul({ M: 6144, N: 896, K: 4864, alpha: 0.5 }, 0, 0).dims;
    assertEquals(Array.from(d), [6144, 896, 704, 1065353216, 704, 704 * 896, 6144 * 896, 4864]);
    setPerfSwitches({ wideSplit: 1 });
    assertEquals(planMatmul({ M: 6144, N: 896, K: 4864 }, 0, 0).slices, 1, "wideSplit=1: no tile product splits");
  } finally {
    setPerfSwitches(prev);
  }
});

Deno.test("matmul plan: vec4 loads per operand and vec4 stores follow the layout and the binding offsets", () => {
  const v = (o: EncodeMatmulOpts, a = 0, b = 0) => {
    const x = vecLoads(o, a, b);
    return `${x.a ? "A" : "-"}${x.b ? "B" : "-"}`;
  };
  // K > SHORT_K: tile96h (a short K runs tile64, which loads scalars).
  assertEquals(v({ M: 132, N: 136, K: 136 }), "AB");
  assertEquals(v({ M: 132, N: 136, K: 137 }), "-B", "odd K: k-fastest A refused");
  assertEquals(v({ M: 130, N: 136, K: 136, transA: true }), "-B", "M not a multiple of 4 for m-fastest A");
  assertEquals(v({ M: 132, N: 136, K: 136, transB: true, bF16: true }), "A-", "f16 B");
  assertEquals(v({ M: 132, N: 136, K: 136 }, 4, 0), "-B", "A's binding off 16 bytes");
  assertEquals(v({ M: 100, N: 70, K: 64 }), "--", "tile64 loads scalars");
  assert(
    storesVec4({ M: 300, N: 260, K: 140 }) && !storesVec4({ M: 300, N: 258, K: 140 }) &&
      !storesVec4({ M: 300, N: 260, K: 140 }, 4),
    "vec4 stores where N and C's offset allow",
  );
  assert(
    !storesVec4({ M: 100, N: 72, K: 64 }) && !storesVec4({ M: 6144, N: 16, K: 896 }),
    "no vec4 stores off tile96h",
  );
  assertEquals(
    [tileStep(32768), tileStep(16896), tileStep(16384)],
    [16, 16, 8],
    "the step the workgroup memory allows",
  );
});
