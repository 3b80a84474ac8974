// The SQL worker as a subprocess under Deno: a comlink endpoint over the child's stdin/stdout,
// each message a 4-byte little-endian length then the V8 serialization of the value (the same
// structured clone a Worker's postMessage does: bigint and Uint8Array survive). Used because
// Deno's Worker.terminate() leaves a worker that is stuck in a query spinning on a core until the
// process exits (denoland/deno#35657); a process is killed for real.
import type * as Comlink from "comlink";
import { fileURLToPath } from "node:url";
import { deserialize, serialize } from "node:v8";
import type { SqlWorkerHandle } from "./sql-pool.ts";

/** Length-prefixed frame of one message. */
export function encodeFrame(message: unknown): Uint8Array {
  const body = serialize(message);
  const out = new Uint8Array(4 + body.length);
  new DataView(out.buffer).setUint32(0, body.length, true);
  out.set(body, 4);
  return out;
}

/**
 * Reassembles frames from arbitrary chunks of a byte stream. Chunks are queued, not merged: a frame's
 * bytes are copied once, when the frame is complete (or not at all when it lies in one chunk), so a
 * database of many megabytes arriving in 64 KiB chunks costs linear time, not quadratic.
 */
export class FrameDecoder {
  private chunks: Uint8Array[] = [];
  private size = 0;
  /** Body length of the frame being read; -1 until its 4-byte header is in. */
  private need = -1;

  /** Adds `chunk`; returns the messages it completed, in order. */
  push(chunk: Uint8Array): unknown[] {
    if (chunk.length) {
      this.chunks.push(chunk);
      this.size += chunk.length;
    }
    const out: unknown[] = [];
    for (;;) {
      if (this.need < 0) {
        if (this.size < 4) break;
        const head = this.take(4);
        this.need = new DataView(head.buffer, head.byteOffset, 4).getUint32(0, true);
      }
      if (this.size < this.need) break;
      out.push(deserialize(this.take(this.need)));
      this.need = -1;
    }
    return out;
  }

  /** Removes the first n queued bytes (n <= size): a view when they lie in the first chunk, else one copy. */
  private take(n: number): Uint8Array {
    this.size -= n;
    const first = this.chunks[0];
    if (first.length >= n) {
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = new Uint8Array(n);
    let at = 0;
    while (at < n) {
      const c = this.chunks[0];
      const k = Math.min(c.length, n - at);
      out.set(c.subarray(0, k), at);
      at += k;
      if (k === c.length) this.chunks.shift();
      else this.chunks[0] = c.subarray(k);
    }
    return out;
  }
}

type Listener = EventListenerOrEventListenerObject;

function dispatch(listeners: Set<Listener>, ev: Event): void {
  for (const l of [...listeners]) typeof l === "function" ? l(ev) : l.handleEvent(ev);
}

/** Child side: stdin/stdout as a comlink endpoint; the process exits when stdin closes. */
export function stdioEndpoint(): Comlink.Endpoint {
  // Frames own stdout: anything printed by libraries goes to stderr instead.
  console.log = console.error;
  const listeners = new Set<Listener>();
  (async () => {
    const dec = new FrameDecoder();
    for await (const chunk of Deno.stdin.readable) {
      for (const data of dec.push(chunk)) dispatch(listeners, new MessageEvent("message", { data }));
    }
    Deno.exit(0);
  })();
  return {
    postMessage(message: unknown) {
      const frame = encodeFrame(message);
      for (let off = 0; off < frame.length;) off += Deno.stdout.writeSync(frame.subarray(off));
    },
    addEventListener(type: string, l: Listener) {
      if (type === "message") listeners.add(l);
    },
    removeEventListener(type: string, l: Listener) {
      if (type === "message") listeners.delete(l);
    },
  };
}

/** Parent side: starts workers/sql.process.ts under this Deno and returns it as a pool worker. */
export function spawnSqlProcess(): SqlWorkerHandle {
  const script = fileURLToPath(new URL("../../workers/sql.process.ts", import.meta.url));
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--no-prompt", "--allow-read", "--allow-env", script],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const messages = new Set<Listener>();
  const errors = new Set<Listener>();
  const writer = child.stdin.getWriter();
  let killed = false;
  (async () => {
    const dec = new FrameDecoder();
    try {
      for await (const chunk of child.stdout) {
        for (const data of dec.push(chunk)) dispatch(messages, new MessageEvent("message", { data }));
      }
    } catch {
      // The pipe broke: reported below as the process ending.
    }
    const status = await child.status;
    if (!killed) {
      dispatch(
        errors,
        new ErrorEvent("error", {
          message: `sql process exited with code ${status.code}${status.signal ? ` (${status.signal})` : ""}`,
        }),
      );
    }
  })();
  return {
    postMessage(message: unknown) {
      writer.write(encodeFrame(message)).catch(() => undefined);
    },
    addEventListener(type: string, l: Listener) {
      (type === "error" ? errors : messages).add(l);
    },
    removeEventListener(type: string, l: Listener) {
      (type === "error" ? errors : messages).delete(l);
    },
    terminate() {
      if (killed) return;
      killed = true;
      writer.close().catch(() => undefined);
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    },
  };
}
