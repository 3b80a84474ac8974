import { assert, assertEquals } from "../../tests/assert.ts";
import { classifyRunError } from "../runtime/run-plan.ts";
import { hubSource, memoryCache, UnreachableError } from "./source.web.ts";

const offline = (() => Promise.reject(new TypeError("Failed to fetch"))) as typeof fetch;

Deno.test('hub source offline: issue 48 — not "Failed to fetch" but the source, the URL, the cache\'s state and what to do', async () => {
  const src = hubSource("Qwen/Qwen2.5-Coder-0.5B-Instruct", { fetch: offline, cache: memoryCache() });
  const err = await src.read("config.json").then(() => null, (e) => e);
  assert(err instanceof UnreachableError, String(err));
  assertEquals(err.url, "https://huggingface.co/Qwen/Qwen2.5-Coder-0.5B-Instruct/resolve/main/config.json");
  assert(
    err.message.startsWith(
      "Hugging Face Hub Qwen/Qwen2.5-Coder-0.5B-Instruct@main was unreachable: the request for https://huggingface.co/",
    ),
    err.message,
  );
  assert(err.message.includes("The model cache has no copy of this file."), err.message);
  assert(err.message.includes("connect to the internet and run the cell again"), err.message);
  assertEquals(
    classifyRunError(`cell "model" (model): ${err.message}`),
    "unreachable",
    "not the model remedy (config.json, CORS, q4)",
  );
  // Without a cache the message says no copy is kept; exists() says the same as read().
  const bare = hubSource("a/b", { fetch: offline });
  const e2 = await bare.exists("tokenizer.json").then(() => null, (e) => e);
  assert(e2 instanceof UnreachableError && e2.message.includes("without the model cache"), String(e2));
});

Deno.test("hub source offline: an aborted download stays an abort, not an unreachable host", async () => {
  const ac = new AbortController();
  const aborting = ((_: unknown, init?: RequestInit) => {
    ac.abort(new Error("run stopped"));
    return Promise.reject(init?.signal?.reason);
  }) as typeof fetch;
  const err = await hubSource("a/b", { fetch: aborting }).read("config.json", undefined, ac.signal).then(
    () => null,
    (e) => e,
  );
  assert(!(err instanceof UnreachableError), String(err));
});
