// A configuration generation: everything one Prometheus load reads (prometheus.yml, gzipped as the Secret holds it;
// the rule files; the credential files), named by its content. Three checksum files travel with the files, as keys of
// the config Secret: `config.sha256`, `rules.sha256` and `assets.sha256`, in `sha256sum` format, one line per file in
// name order. The generation id is the first 16 hex digits of the sha256 of those three texts, concatenated. The
// reloader (reloader.ts) computes the same id with busybox (`cat ... | sha256sum`) and checks its copy of every file
// with `sha256sum -c`, so it never installs a generation the kubelet has delivered only in part (a rule shard newer
// or older than the config Secret), and it reports the id of each generation Prometheus accepted or refused.
import { createHash } from "node:crypto";

/** The checksum files of a generation (keys of the config Secret and of the last-good Secret). */
export const CHECKSUM_KEYS = ["config.sha256", "rules.sha256", "assets.sha256"] as const;

/** The checksum files of one generation and its id. */
export interface Generation {
  /** Checksum file name -> its text. */
  checksums: Record<(typeof CHECKSUM_KEYS)[number], string>;
  /** First 16 hex digits of sha256(config.sha256 + rules.sha256 + assets.sha256). */
  id: string;
}

function sha256(data: Buffer | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** `sha256sum` lines of `files` (name -> bytes), in name order. */
export function checksumLines(files: Record<string, Buffer>): string {
  return Object.keys(files)
    .sort()
    .map((name) => `${sha256(files[name] ?? Buffer.alloc(0))}  ${name}\n`)
    .join("");
}

/**
 * The generation of a configuration: `configKey` and its gzipped bytes, the rule files (file name -> text) and the
 * asset files (key -> base64, as the Secret holds them).
 */
export function generationOf(
  configKey: string,
  configGz: Buffer,
  rules: Record<string, string>,
  assets: Record<string, string>,
): Generation {
  const checksums = {
    "config.sha256": checksumLines({ [configKey]: configGz }),
    "rules.sha256": checksumLines(
      Object.fromEntries(Object.entries(rules).map(([k, v]) => [k, Buffer.from(v, "utf8")])),
    ),
    "assets.sha256": checksumLines(
      Object.fromEntries(Object.entries(assets).map(([k, v]) => [k, Buffer.from(v, "base64")])),
    ),
  };
  return { checksums, id: generationId(checksums) };
}

/** The id of a generation from its three checksum texts (as the reloader computes it). */
export function generationId(checksums: Record<(typeof CHECKSUM_KEYS)[number], string>): string {
  return sha256(CHECKSUM_KEYS.map((k) => checksums[k]).join("")).slice(0, 16);
}
