// unshared(): what the writeBuffer guard hands dawn.node instead of a view of shared memory.
import { assert, assertEquals } from "../../tests/assert.ts";
import { copySharedViewsOn, unshared } from "./shared-views.ts";

Deno.test("unshared: views of a SharedArrayBuffer become plain copies of the same type, offset and length; plain data passes through", () => {
  const sab = new SharedArrayBuffer(32);
  const f = new Float32Array(sab, 4, 5);
  f.set([1, 2, 3, 4, 5]);
  const cf = unshared(f);
  assert(cf instanceof Float32Array && !(cf.buffer instanceof SharedArrayBuffer), "a Float32Array on a plain buffer");
  assertEquals(Array.from(cf), [1, 2, 3, 4, 5]);
  const dv = unshared(new DataView(sab, 4, 8));
  assert(
    dv instanceof Uint8Array && dv.byteLength === 8 && !(dv.buffer instanceof SharedArrayBuffer),
    "a DataView becomes bytes",
  );
  assertEquals(Array.from(dv), Array.from(new Uint8Array(sab, 4, 8)));
  const raw: unknown = unshared(sab);
  assert(
    raw instanceof ArrayBuffer && !(raw instanceof SharedArrayBuffer) && raw.byteLength === 32,
    "a SharedArrayBuffer becomes an ArrayBuffer",
  );
  const plain = new Uint32Array(3);
  assert(unshared(plain) === plain, "plain views are not copied");
});

Deno.test("copySharedViewsOn: writeBuffer and writeTexture receive copies of shared sources, the other arguments unchanged; patching twice is a no-op", () => {
  const seen: unknown[][] = [];
  class FakeQueue {
    writeBuffer(...a: unknown[]) {
      seen.push(["buffer", ...a]);
    }
    writeTexture(...a: unknown[]) {
      seen.push(["texture", ...a]);
    }
  }
  assert(copySharedViewsOn(FakeQueue.prototype), "patched");
  assert(!copySharedViewsOn(FakeQueue.prototype), "second patch is a no-op");
  const q = new FakeQueue();
  const shared = new Float32Array(new SharedArrayBuffer(16)).fill(2);
  q.writeBuffer("buf", 8, shared, 1, 2);
  q.writeTexture("dst", shared, "layout", "size");
  assertEquals(seen[0].slice(0, 3), ["buffer", "buf", 8]);
  assert(
    seen[0][3] instanceof Float32Array && !((seen[0][3] as Float32Array).buffer instanceof SharedArrayBuffer),
    "copied",
  );
  assertEquals(seen[0].slice(4), [1, 2]);
  assert(
    !((seen[1][2] as Float32Array).buffer instanceof SharedArrayBuffer) && seen[1][1] === "dst" &&
      seen[1][3] === "layout",
    "writeTexture copied too",
  );
});
