// One SQL worker of the reward pool (src/runtime/sql-pool.ts): sql.js with a bounded cache of
// open databases, each guarded so that no query changes what a later one sees.
import * as Comlink from "comlink";
import { createSqlService } from "../src/runtime/sql-service.ts";

Comlink.expose(createSqlService());
