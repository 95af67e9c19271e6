import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);

// ../../packages/core/dist/chunk-5E3ROYKX.js
var CA_VALIDITY_MS = 10 * 365 * 864e5;

export {
  CA_VALIDITY_MS
};
