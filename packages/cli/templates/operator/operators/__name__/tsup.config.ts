// Builds the operator with the build every operator shares (@capstan/cli/tsup): the library entry (src/index.ts,
// with type declarations) and the operator process (src/main.ts -> dist/main.js, one self-contained ESM bundle
// for the container image).
import { operatorTsupConfig } from "@capstan/cli/tsup";
import { defineConfig } from "tsup";

export default defineConfig(operatorTsupConfig());
