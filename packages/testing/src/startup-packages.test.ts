// startupPackages: a child process's module hooks see what a set of static imports loads, packages named as npm
// names them; files reached only through import() are not loaded.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { packageOf, startupPackages, staticImports } from "./startup-packages.ts";

describe("packageOf", () => {
  it("names plain and scoped packages, the innermost node_modules winning", () => {
    expect(packageOf("file:///r/node_modules/pino/lib/x.js")).toBe("pino");
    expect(packageOf("file:///r/node_modules/@aws-sdk/client-s3/dist-cjs/index.js")).toBe(
      "@aws-sdk/client-s3",
    );
    expect(packageOf("file:///r/node_modules/a/node_modules/@s/b/i.js")).toBe("@s/b");
    expect(packageOf("file:///r/src/main.ts")).toBeUndefined();
    expect(packageOf("node:fs")).toBeUndefined();
  });
});

describe("startupPackages", () => {
  const dir = mkdtempSync(join(tmpdir(), "capstan-startup-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("lists what main's static imports load, and nothing that only import() reaches", async () => {
    // Two fake packages in a node_modules of the directory: one imported at start, one only by import().
    writeFileSync(join(dir, "package.json"), '{"type":"module"}');
    for (const name of ["eager", "lazy"]) {
      const pkg = join(dir, "node_modules", name);
      mkdirSync(pkg, { recursive: true });
      writeFileSync(join(pkg, "package.json"), `{"name":"${name}","type":"module","exports":"./index.js"}`);
      writeFileSync(join(pkg, "index.js"), "export const x = 1;\n");
    }
    writeFileSync(
      join(dir, "wiring.ts"),
      'import { x } from "eager";\nexport const later = () => import("lazy");\nexport const y: number = x;\n',
    );
    writeFileSync(
      join(dir, "main.ts"),
      'import type { Foo } from "typed-only";\nimport { y } from "./wiring.ts";\nconsole.log(y);\nthrow new Error("main must not run");\n',
    );
    expect(staticImports(join(dir, "main.ts"))).toEqual([join(dir, "wiring.ts")]);
    expect(await startupPackages(join(dir, "main.ts"))).toEqual(["eager"]);
  });
});
