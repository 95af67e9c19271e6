// @capstan/testing: helpers for integration and end-to-end tests against a real cluster.
export * from "./cluster.ts";
export * from "./eventually.ts";
