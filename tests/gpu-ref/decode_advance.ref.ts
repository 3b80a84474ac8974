// Reference of decode_advance.wgsl on plain arrays (integers: exact).

/** The state after one step: ids = chosen tokens, positions and key counts + 1, total + 1. */
export function advanceRef(
  chosen: ArrayLike<number>,
  pos: readonly number[],
  seqlens: readonly number[],
  total: number,
): { ids: number[]; pos: number[]; seqlens: number[]; total: number } {
  return {
    ids: pos.map((_, b) => chosen[2 * b]),
    pos: pos.map((x) => x + 1),
    seqlens: seqlens.map((x) => x + 1),
    total: total + 1,
  };
}
