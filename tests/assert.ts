// Small assertion helpers, so tests need nothing fetched at run time (no jsr:@std/assert offline).

/** Throws with `msg` unless `cond` holds. */
export function assert(cond: unknown, msg = "assertion failed"): asserts cond {
  if (!cond) throw new Error(msg);
}

/** Deep equality through structured comparison of JSON-like values and typed arrays. */
export function assertEquals(actual: unknown, expected: unknown, msg?: string): void {
  if (!deepEqual(actual, expected)) {
    throw new Error(
      `${msg ? msg + ": " : ""}values differ\n  actual:   ${show(actual)}\n  expected: ${show(expected)}`,
    );
  }
}

/** Asserts that `fn` throws (or rejects) with a message matching `pattern`. */
export async function assertRejects(fn: () => unknown, pattern?: RegExp): Promise<Error> {
  try {
    await fn();
  } catch (e) {
    if (!(e instanceof Error)) throw new Error(`threw a non-Error: ${String(e)}`);
    if (pattern && !pattern.test(e.message)) {
      throw new Error(`error message ${JSON.stringify(e.message)} does not match ${pattern}`);
    }
    return e;
  }
  throw new Error("expected an error, none was thrown");
}

/**
 * Throws unless `got` and `ref` are as long and hold the same bits element by element (compared as u32, so -0 is not 0
 * and NaNs must match too), naming `what` and the reference `refName`.
 */
export function assertSameBits(got: Float32Array, ref: Float32Array, what: string, refName = "reference"): void {
  if (got.length !== ref.length) throw new Error(`${what}: ${got.length} elements, ${refName} ${ref.length}`);
  const g = new Uint32Array(got.buffer, got.byteOffset, got.length),
    r = new Uint32Array(ref.buffer, ref.byteOffset, ref.length);
  const bad = g.findIndex((v, i) => v !== r[i]);
  if (bad >= 0) throw new Error(`${what}: element ${bad} ${got[bad]} != ${refName} ${ref[bad]}`);
}

/**
 * Element-wise |actual - expected| <= atol + rtol*|expected|; on failure prints the first
 * mismatches and the largest error, as the kernel tests of llm.c do.
 */
export function assertClose(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  opts: { atol?: number; rtol?: number; name?: string } = {},
): { maxAbs: number; maxRel: number } {
  const { atol = 1e-5, rtol = 1e-4, name = "tensor" } = opts;
  if (actual.length !== expected.length) {
    throw new Error(`${name}: length ${actual.length} != expected ${expected.length}`);
  }
  let maxAbs = 0;
  let maxRel = 0;
  const bad: string[] = [];
  let nBad = 0;
  for (let i = 0; i < actual.length; i++) {
    const a = actual[i];
    const e = expected[i];
    const err = Math.abs(a - e);
    if (!(err <= atol + rtol * Math.abs(e))) {
      nBad++;
      if (bad.length < 8) bad.push(`  [${i}] got ${a} expected ${e} (|err| ${err.toExponential(2)})`);
    }
    if (Number.isFinite(err)) {
      maxAbs = Math.max(maxAbs, err);
      maxRel = Math.max(maxRel, err / Math.max(Math.abs(e), 1e-12));
    } else {
      maxAbs = Infinity;
    }
  }
  if (nBad > 0) {
    throw new Error(
      `${name}: ${nBad}/${actual.length} elements out of tolerance (atol ${atol}, rtol ${rtol}); ` +
        `largest |err| ${maxAbs.toExponential(3)}\n${bad.join("\n")}`,
    );
  }
  return { maxAbs, maxRel };
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (ArrayBuffer.isView(a) && ArrayBuffer.isView(b)) {
    const x = a as unknown as ArrayLike<unknown>;
    const y = b as unknown as ArrayLike<unknown>;
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!Object.is(x[i], y[i])) return false;
    return true;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  if (a && b && typeof a === "object" && typeof b === "object") {
    const ka = Object.keys(a as object);
    const kb = Object.keys(b as object);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return false;
}

function show(v: unknown): string {
  try {
    return JSON.stringify(
      v,
      (
        _k,
        x,
      ) => (typeof x === "bigint"
        ? `${x}n`
        : ArrayBuffer.isView(x)
        ? Array.from(x as unknown as ArrayLike<number>)
        : x),
    );
  } catch {
    return String(v);
  }
}
