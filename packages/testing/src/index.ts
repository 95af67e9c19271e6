/**
 * @capstan/testing: everything an operator's tests need, from one package. Unit tests: the test kit of
 * @capstan/core/testing (a scripted fake API server and reconcileOnce), re-exported. Integration and
 * end-to-end tests against a real cluster: connect, a namespace per test, CRDs, eventually().
 *
 * @module @capstan/testing
 */

export * from "@capstan/core/testing";
export * from "./cluster.ts";
export * from "./eventually.ts";
export * from "./helm.ts";
export * from "./local-process.ts";
export * from "./requests.ts";
export * from "./startup-packages.ts";
export * from "./wait-for.ts";
