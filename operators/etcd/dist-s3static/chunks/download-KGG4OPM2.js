import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);
import {
  parseDownloadArgs
} from "./chunk-LEIOOQAL.js";
import {
  TERMINATION_LOG,
  writeAtomically
} from "./chunk-PXDUKDHE.js";
import {
  parseFlags,
  require_dist_cjs
} from "./chunk-27BPVPNY.js";
import "./chunk-QWCNFEPG.js";
import "./chunk-Z6WN2YAM.js";
import "./chunk-7BHEFNLD.js";
import {
  __toESM
} from "./chunk-ANXZA7FK.js";

// src/backup/download.ts
var import_client_s3 = __toESM(require_dist_cjs(), 1);
import { createReadStream, existsSync } from "node:fs";
import { mkdir, open, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { Agent } from "node:https";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
var RESTORE_MARKER = "capstan-restore.json";
async function nonEmpty(dir) {
  const entries = await readdir(dir).catch((err) => {
    if (err.code === "ENOENT") return [];
    throw err;
  });
  return entries.length > 0;
}
async function openSource(args, env) {
  const f = args.from;
  if (f.kind === "file") {
    if (!existsSync(f.path)) {
      throw new Error(
        `backup-download: ${f.path} does not exist on the source claim (spec.bootstrap.restore.pvc.path, or the EtcdBackup's status.location)`
      );
    }
    return createReadStream(f.path);
  }
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    throw new Error(
      "backup-download: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set (from the Secret named in s3.credentialsSecret)"
    );
  }
  const client = new import_client_s3.S3Client({
    region: f.region,
    ...f.endpoint === void 0 ? {} : { endpoint: f.endpoint },
    forcePathStyle: f.forcePathStyle,
    credentials: { accessKeyId, secretAccessKey },
    ...f.caFile === void 0 ? {} : { requestHandler: { httpsAgent: new Agent({ ca: await readFile(f.caFile, "utf8") }) } }
  });
  try {
    const out = await client.send(new import_client_s3.GetObjectCommand({ Bucket: f.bucket, Key: f.key }));
    if (!(out.Body instanceof Readable)) {
      throw new Error(`backup-download: s3://${f.bucket}/${f.key} returned no body`);
    }
    out.Body.once("close", () => client.destroy());
    return out.Body;
  } catch (err) {
    client.destroy();
    throw new Error(
      `backup-download: reading s3://${f.bucket}/${f.key}: ${err instanceof Error ? err.message : String(err)}`
    );
  }
}
async function downloadSnapshot(args, env = process.env) {
  let alreadyRestored = false;
  if (await nonEmpty(args.dataDir)) {
    if (!existsSync(join(args.dataDir, RESTORE_MARKER))) {
      throw new Error(
        `backup-download: the data directory ${args.dataDir} already holds a member's data; a restore never writes over it (delete the EtcdCluster and its claims to restore again)`
      );
    }
    alreadyRestored = true;
  }
  await rm(args.workDir, { recursive: true, force: true });
  await mkdir(args.workDir, { recursive: true, mode: 448 });
  const got = await writeAtomically(await openSource(args, env), args.to, 448);
  const fail = (what) => rm(args.to, { force: true }).then(() => Promise.reject(new Error(what)));
  if (args.size !== void 0 && got.size !== args.size) {
    await fail(
      `backup-download: the snapshot is ${got.size} bytes, the backup recorded ${args.size}: not restoring a truncated or different file`
    );
  }
  if (args.sha256 !== void 0 && got.sha256 !== args.sha256) {
    await fail(
      `backup-download: the snapshot's sha256 is ${got.sha256}, expected ${args.sha256} (spec.bootstrap.restore.sha256 or the backup's status.sha256)`
    );
  }
  return { ...got, alreadyRestored };
}
var FINISH_FLAGS = {
  from: { type: "string" },
  to: { type: "string" },
  "work-dir": { type: "string" }
};
function parseFinishArgs(args) {
  const parsed = parseFlags("restore-finish", args, FINISH_FLAGS, "--from=DIR --to=DIR --work-dir=DIR");
  return { from: parsed.need("from"), to: parsed.need("to"), workDir: parsed.need("work-dir") };
}
async function finishRestore(args, finished = /* @__PURE__ */ new Date()) {
  if (await nonEmpty(args.to)) {
    if (!existsSync(join(args.to, RESTORE_MARKER))) {
      throw new Error(
        `restore-finish: ${args.to} already holds a member's data; the restored data in ${args.from} is not moved over it`
      );
    }
    await rm(args.workDir, { recursive: true, force: true });
    return { moved: false };
  }
  if (!existsSync(join(args.from, "member"))) {
    throw new Error(`restore-finish: ${args.from} holds no etcd member directory; etcdutl did not finish`);
  }
  await writeFile(
    join(args.from, RESTORE_MARKER),
    `${JSON.stringify({ finished: finished.toISOString() })}
`
  );
  await rm(args.to, { recursive: true, force: true });
  await rename(args.from, args.to);
  const dir = await open(dirname(args.to), "r");
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
  await rm(args.workDir, { recursive: true, force: true });
  return { moved: true };
}
async function report(message, terminationLog) {
  if (existsSync(terminationLog)) await writeFile(terminationLog, message);
  process.stdout.write(`${message}
`);
}
async function backupDownloadCommand(argv, terminationLog = TERMINATION_LOG) {
  const result = await downloadSnapshot(parseDownloadArgs(argv));
  await report(JSON.stringify(result), terminationLog);
  return result;
}
async function restoreFinishCommand(argv, terminationLog = TERMINATION_LOG) {
  const result = await finishRestore(parseFinishArgs(argv));
  await report(JSON.stringify(result), terminationLog);
  return result;
}
export {
  RESTORE_MARKER,
  backupDownloadCommand,
  downloadSnapshot,
  finishRestore,
  parseFinishArgs,
  restoreFinishCommand
};
