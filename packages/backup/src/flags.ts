// The command lines of the operator images' Job steps (backup-upload, backup-fetch, backup-delete, and each
// operator's own): one strict flag parser on node:util parseArgs, and the S3 flags that upload and download share
// (the builder's side and the parser's side in one place, so the Job and the subcommand cannot disagree).
import { parseArgs } from "node:util";
import { DEFAULT_S3_REGION } from "./destination.ts";
import { S3_CA_FILE } from "./s3-access.ts";

/** A subcommand's flags: each takes a value (`--name=value`) or is a switch (`--name`). */
export type FlagOptions = Readonly<Record<string, { readonly type: "string" | "boolean" }>>;

/** The flags given: a string per value flag, true per switch; absent when not given. */
export type FlagValues<O extends FlagOptions> = {
  [K in keyof O]?: O[K]["type"] extends "string" ? string : boolean;
};

/** A parsed command line: the flags given, and `need` for one that must be given. */
export interface ParsedFlags<O extends FlagOptions> {
  values: FlagValues<O>;
  /** The value of a flag that must be given (not empty); throws `--name is required`. */
  need(name: keyof O & string): string;
  /** Throws `message` prefixed with the command (and its usage). */
  fail(message: string): never;
}

/**
 * Parses `args` strictly: an unknown flag, a positional argument, a value flag without its value, or a switch
 * given a value throws an Error naming the command and the flag (followed by `usage` when given).
 */
export function parseFlags<const O extends FlagOptions>(
  command: string,
  args: string[],
  options: O,
  usage?: string,
): ParsedFlags<O> {
  const fail = (message: string): never => {
    throw new Error(`${command}: ${message}${usage === undefined ? "" : `; usage: ${command} ${usage}`}`);
  };
  // Not parseArgs' own strict mode: its errors name the flag only inside their English text; the tokens say it.
  const { tokens } = parseArgs({ args, options, strict: false, allowPositionals: true, tokens: true });
  const values: Record<string, string | boolean> = {};
  for (const t of tokens) {
    if (t.kind === "positional") fail(`unexpected argument "${t.value}": flags are --name=value`);
    if (t.kind === "option-terminator") fail(`unexpected argument "--": flags are --name=value`);
    if (t.kind !== "option") continue;
    const spec = Object.hasOwn(options, t.name) ? options[t.name] : undefined;
    if (spec === undefined) fail(`unknown flag ${t.rawName}`);
    else if (spec.type === "boolean") {
      if (t.value !== undefined)
        fail(`--${t.name} is a switch and takes no value ("${t.rawName}=${t.value}")`);
      values[t.name] = true;
    } else {
      // `--a --b`: parseArgs would take "--b" as a's value; a value starting with "-" must be given as --a=-x.
      if (t.value === undefined || (t.inlineValue === false && t.value.startsWith("-"))) {
        fail(`--${t.name} needs a value (--${t.name}=VALUE)`);
      }
      values[t.name] = t.value as string;
    }
  }
  const need = (name: keyof O & string): string => {
    const v = values[name];
    if (typeof v !== "string" || v === "") fail(`--${name} is required`);
    return v as string;
  };
  return { values: values as FlagValues<O>, need, fail };
}

/** An object in S3-compatible storage and how to reach it. */
export interface S3Object {
  bucket: string;
  key: string;
  region: string;
  endpoint?: string;
  forcePathStyle: boolean;
  /** A PEM CA bundle to trust. */
  caFile?: string;
}

/** The S3 fields of a backup destination or a restore source. */
interface S3Spec {
  bucket: string;
  region?: string;
  endpoint?: string;
  forcePathStyle?: boolean;
  caSecret?: unknown;
}

/** The object `key` of `s3`, with the spec's defaults applied (the CA bundle where s3-access.ts mounts it). */
export function s3ObjectOf(s3: S3Spec, key: string): S3Object {
  return {
    bucket: s3.bucket,
    key,
    region: s3.region ?? DEFAULT_S3_REGION,
    ...(s3.endpoint === undefined ? {} : { endpoint: s3.endpoint }),
    forcePathStyle: s3.forcePathStyle === true,
    ...(s3.caSecret === undefined ? {} : { caFile: S3_CA_FILE }),
  };
}

/** The S3 flags, shared by backup-upload and backup-download. */
export const S3_FLAGS = {
  "s3-bucket": { type: "string" },
  "s3-key": { type: "string" },
  "s3-region": { type: "string" },
  "s3-endpoint": { type: "string" },
  "s3-force-path-style": { type: "boolean" },
  "ca-file": { type: "string" },
} as const;

/** `o` as S3 flags. */
export function s3Flags(o: S3Object): string[] {
  return [
    `--s3-bucket=${o.bucket}`,
    `--s3-key=${o.key}`,
    `--s3-region=${o.region}`,
    ...(o.endpoint === undefined ? [] : [`--s3-endpoint=${o.endpoint}`]),
    ...(o.forcePathStyle ? ["--s3-force-path-style"] : []),
    ...(o.caFile === undefined ? [] : [`--ca-file=${o.caFile}`]),
  ];
}

/** A local file, or an object in S3: where a snapshot is written to or read from. */
export type FileOrS3 = { kind: "file"; path: string } | ({ kind: "s3" } & S3Object);

/** `where` as flags: `--<fileFlag>=PATH`, or the S3 flags. */
export function fileOrS3Flags(fileFlag: string, where: FileOrS3): string[] {
  if (where.kind === "file") return [`--${fileFlag}=${where.path}`];
  const { kind: _kind, ...o } = where;
  return s3Flags(o);
}

/** Reads back {@link fileOrS3Flags}: the file flag, or else the S3 flags (bucket and key required); not both. */
export function parseFileOrS3<O extends FlagOptions & typeof S3_FLAGS>(
  parsed: ParsedFlags<O>,
  fileFlag: keyof O & string,
): FileOrS3 {
  const v = parsed.values as FlagValues<typeof S3_FLAGS> & Record<string, unknown>;
  const path = v[fileFlag];
  if (path !== undefined) {
    if (v["s3-bucket"] !== undefined) parsed.fail(`give --${fileFlag} or --s3-bucket, not both`);
    if (typeof path !== "string" || path === "") parsed.fail(`--${fileFlag} is required`);
    return { kind: "file", path: path as string };
  }
  const endpoint = v["s3-endpoint"];
  const caFile = v["ca-file"];
  return {
    kind: "s3",
    bucket: parsed.need("s3-bucket"),
    key: parsed.need("s3-key"),
    region: v["s3-region"] ?? DEFAULT_S3_REGION,
    ...(endpoint === undefined ? {} : { endpoint }),
    forcePathStyle: v["s3-force-path-style"] === true,
    ...(caFile === undefined ? {} : { caFile }),
  };
}
