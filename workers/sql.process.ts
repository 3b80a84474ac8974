// The SQL worker as a Deno subprocess speaking comlink over stdin/stdout (src/runtime/sql-process.deno.ts).
// Deno's Worker.terminate() does not stop a worker stuck in a long query (denoland/deno#35657):
// the thread keeps a core busy until the process exits. A process can be killed.
import * as Comlink from "comlink";
import { createSqlService } from "../src/runtime/sql-service.ts";
import { stdioEndpoint } from "../src/runtime/sql-process.deno.ts";

Comlink.expose(createSqlService(), stdioEndpoint());
