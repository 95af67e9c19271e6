import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);
import {
  parseDeleteArgs,
  require_dist_cjs
} from "./chunk-27BPVPNY.js";
import {
  __toESM
} from "./chunk-ANXZA7FK.js";

// src/backup/delete.ts
var import_client_s3 = __toESM(require_dist_cjs(), 1);
import { rm, stat } from "node:fs/promises";
import { Agent } from "node:https";
async function removeSnapshotFile(file) {
  const existed = await stat(file).catch(() => void 0) !== void 0;
  await rm(file, { force: true });
  await rm(`${file}.partial`, { force: true });
  return existed;
}
async function backupDeleteCommand(argv) {
  const { file } = parseDeleteArgs(argv);
  const existed = await removeSnapshotFile(file);
  process.stdout.write(`${JSON.stringify({ deleted: file, existed })}
`);
}
var deleteS3Object = async (ref, signal) => {
  const client = new import_client_s3.S3Client({
    region: ref.region,
    ...ref.endpoint === void 0 ? {} : { endpoint: ref.endpoint },
    forcePathStyle: ref.forcePathStyle,
    credentials: ref.credentials,
    maxAttempts: 3,
    ...ref.ca === void 0 ? {} : { requestHandler: { httpsAgent: new Agent({ ca: ref.ca }) } }
  });
  try {
    await client.send(new import_client_s3.DeleteObjectCommand({ Bucket: ref.bucket, Key: ref.key }), {
      abortSignal: AbortSignal.any([signal, AbortSignal.timeout(ref.timeoutMs ?? 3e4)])
    });
  } finally {
    client.destroy();
  }
};

export {
  removeSnapshotFile,
  backupDeleteCommand,
  deleteS3Object
};
