// A scratch repository root for `capstan new operator` in tests (the CLI's unit test and the e2e scaffold suite):
// a temporary directory outside the repository with what a generated operator needs from a Capstan repository,
// linked from this one (the library chart, node_modules, the packages, the image scripts) or copied (the base
// tsconfig, Biome's config, the e2e package's manifest and configs), so the operator generated into it builds, lints,
// tests, packs its image and runs its e2e suite as it would in operators/<name>. Not part of the public API.
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A scratch repository root; `remove()` deletes it (never the linked repository). */
export interface ScratchRepository {
  root: string;
  remove(): void;
}

/** Makes a scratch repository root in the system's temporary directory, linked to the repository at `repo`. */
export function scratchRepository(repo: string, prefix = "capstan-new-"): ScratchRepository {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const link = (path: string) => {
    mkdirSync(join(root, path, ".."), { recursive: true });
    symlinkSync(join(repo, path), join(root, path));
  };
  const copy = (path: string) => cpSync(join(repo, path), join(root, path));
  for (const path of [
    "charts/capstan-operator",
    "node_modules",
    "packages",
    "package-lock.json",
    "e2e/images/operator-image.sh",
    "e2e/images/pack.sh",
    "e2e/images/node",
  ]) {
    link(path);
  }
  for (const path of [
    "tsconfig.base.json",
    "biome.json",
    "e2e/package.json",
    "e2e/vitest.config.ts",
    "e2e/tsconfig.json",
  ]) {
    copy(path);
  }
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}
