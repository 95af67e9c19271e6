// @capstan/core: the public API. Everything an operator imports comes from here.
export * from "./client.ts";
export * from "./errors.ts";
export * from "./kinds.ts";
export * from "./list-watch.ts";
export * from "./logger.ts";
export * from "./metrics.ts";
export * from "./object.ts";
