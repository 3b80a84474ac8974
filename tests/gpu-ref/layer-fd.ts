// Central finite differences in float64, to prove the backward references of the layer kernels.
import { assertClose } from "../assert.ts";

/**
 * Checks `analytic` = d/dx sum(dy * f(x)) element by element against central differences of the
 * float64 function `f`, with step `h`; returns the largest absolute error.
 */
export function checkGradFd(
  f: (x: Float64Array) => ArrayLike<number>,
  x: ArrayLike<number>,
  dy: ArrayLike<number>,
  analytic: ArrayLike<number>,
  name: string,
  tol: { atol?: number; rtol?: number; h?: number } = {},
): number {
  const { atol = 1e-7, rtol = 1e-6, h = 1e-6 } = tol;
  const xs = Float64Array.from(x);
  const loss = (): number => {
    const y = f(xs);
    let s = 0;
    for (let i = 0; i < y.length; i++) s += dy[i] * y[i];
    return s;
  };
  const numeric = numericGrad(xs, loss, h);
  return assertClose(analytic, numeric, { atol, rtol, name: `${name} vs finite differences` }).maxAbs;
}

/** Central differences of a scalar loss with respect to every element of x (x is restored). */
export function numericGrad(x: Float64Array, loss: () => number, eps = 1e-5): Float64Array {
  const g = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const x0 = x[i];
    x[i] = x0 + eps;
    const up = loss();
    x[i] = x0 - eps;
    const down = loss();
    x[i] = x0;
    g[i] = (up - down) / (2 * eps);
  }
  return g;
}
