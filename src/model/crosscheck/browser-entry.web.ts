// Browser bundle entry for browser-check.deno.ts: exposes the model loaders on globalThis.
import { loadHfModel } from "../hf.ts";
import { referenceLogprobs } from "../reference.ts";
import { DirectoryHandleSource, opfsCache, UrlSource } from "../source.web.ts";

const api = { loadHfModel, referenceLogprobs, DirectoryHandleSource, opfsCache, UrlSource };
/** What the bundle puts on globalThis.rlvrModel. */
export type RlvrModelApi = typeof api;
Object.assign(globalThis, { rlvrModel: api });
