// dependency-cruiser's configuration for `npm run lint:cycles`: no import circle among the sources of the packages,
// the operators and the e2e suites. Type-only imports count (tsPreCompilationDeps): a circle of types is still a
// circle of concepts, and it is how runtime circles start.
/** @type {import("dependency-cruiser").IConfiguration} */
export default {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment:
        "This module is part of an import circle. Move what both sides need into a leaf module (a types.ts, a shared helper) that imports neither.",
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: "(^|/)node_modules/" },
    exclude: { path: "(^|/)(node_modules|dist|\\.turbo)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.base.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "types", "node", "default"],
      extensions: [".ts", ".js", ".mjs", ".json"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
