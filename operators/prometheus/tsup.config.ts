// Builds @capstan/prometheus-operator with the build every operator shares (@capstan/cli/tsup). Only the library
// entry (src/index.ts, with type declarations) for now: the operator process (src/main.ts -> dist/main.js, the
// preset's second build) arrives with reconcile/.
import { operatorTsupConfig } from "@capstan/cli/tsup";
import { defineConfig } from "tsup";

export default defineConfig(
  operatorTsupConfig().filter((o) => o.entry !== undefined && Array.isArray(o.entry)),
);
