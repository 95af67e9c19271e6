import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);
import {
  init_protocols,
  parseUploadArgs,
  protocols_exports,
  require_dist_cjs
} from "./chunk-27BPVPNY.js";
import {
  endpoints_exports,
  init_endpoints
} from "./chunk-7BHEFNLD.js";
import {
  __commonJS,
  __require,
  __toCommonJS,
  __toESM
} from "./chunk-ANXZA7FK.js";

// ../../node_modules/@aws-sdk/lib-storage/dist-cjs/index.js
var require_dist_cjs2 = __commonJS({
  "../../node_modules/@aws-sdk/lib-storage/dist-cjs/index.js"(exports) {
    var { PutObjectCommand, ChecksumAlgorithm, CreateMultipartUploadCommand, AbortMultipartUploadCommand, UploadPartCommand, CompleteMultipartUploadCommand, PutObjectTaggingCommand } = require_dist_cjs();
    var { toEndpointV1, getEndpointFromInstructions } = (init_endpoints(), __toCommonJS(endpoints_exports));
    var { extendedEncodeURIComponent } = (init_protocols(), __toCommonJS(protocols_exports));
    var { EventEmitter } = __require("events");
    var { Buffer } = __require("buffer");
    var { statSync, ReadStream } = __require("node:fs");
    var { Readable } = __require("stream");
    var runtimeConfigShared = {
      statSync: () => {
      },
      isFileReadStream(f) {
        return false;
      }
    };
    var runtimeConfig = {
      ...runtimeConfigShared,
      runtime: "node",
      statSync,
      isFileReadStream(f) {
        return f instanceof ReadStream;
      }
    };
    var byteLength = (input) => {
      if (input == null) {
        return 0;
      }
      if (typeof input === "string") {
        return Buffer.byteLength(input);
      }
      if (typeof input.byteLength === "number") {
        return input.byteLength;
      } else if (typeof input.length === "number") {
        return input.length;
      } else if (typeof input.size === "number") {
        return input.size;
      } else if (typeof input.start === "number" && typeof input.end === "number") {
        return input.end + 1 - input.start;
      } else if (runtimeConfig.isFileReadStream(input)) {
        try {
          return runtimeConfig.statSync(input.path).size;
        } catch (error) {
          return void 0;
        }
      }
      return void 0;
    };
    var BYTE_LENGTH_SOURCE;
    (function(BYTE_LENGTH_SOURCE2) {
      BYTE_LENGTH_SOURCE2["EMPTY_INPUT"] = "a null or undefined Body";
      BYTE_LENGTH_SOURCE2["CONTENT_LENGTH"] = "the ContentLength property of the params set by the caller";
      BYTE_LENGTH_SOURCE2["STRING_LENGTH"] = "the encoded byte length of the Body string";
      BYTE_LENGTH_SOURCE2["TYPED_ARRAY"] = "the byteLength of a typed byte array such as Uint8Array";
      BYTE_LENGTH_SOURCE2["LENGTH"] = "the value of Body.length";
      BYTE_LENGTH_SOURCE2["SIZE"] = "the value of Body.size";
      BYTE_LENGTH_SOURCE2["START_END_DIFF"] = "the numeric difference between Body.start and Body.end";
      BYTE_LENGTH_SOURCE2["STAT"] = "the size of the file given by Body.path on disk as reported by statSync";
    })(BYTE_LENGTH_SOURCE || (BYTE_LENGTH_SOURCE = {}));
    var byteLengthSource = (input, override) => {
      if (override != null) {
        return BYTE_LENGTH_SOURCE.CONTENT_LENGTH;
      }
      if (input == null) {
        return BYTE_LENGTH_SOURCE.EMPTY_INPUT;
      }
      if (typeof input === "string") {
        return BYTE_LENGTH_SOURCE.STRING_LENGTH;
      }
      if (typeof input.byteLength === "number") {
        return BYTE_LENGTH_SOURCE.TYPED_ARRAY;
      } else if (typeof input.length === "number") {
        return BYTE_LENGTH_SOURCE.LENGTH;
      } else if (typeof input.size === "number") {
        return BYTE_LENGTH_SOURCE.SIZE;
      } else if (typeof input.start === "number" && typeof input.end === "number") {
        return BYTE_LENGTH_SOURCE.START_END_DIFF;
      } else if (runtimeConfig.isFileReadStream(input)) {
        try {
          runtimeConfig.statSync(input.path).size;
          return BYTE_LENGTH_SOURCE.STAT;
        } catch (error) {
          return void 0;
        }
      }
      return void 0;
    };
    async function* getChunkStream(data, partSize, getNextData) {
      let partNumber = 1;
      const currentBuffer = { chunks: [], length: 0 };
      for await (const datum of getNextData(data)) {
        currentBuffer.chunks.push(datum);
        currentBuffer.length += datum.byteLength;
        while (currentBuffer.length > partSize) {
          const dataChunk = currentBuffer.chunks.length > 1 ? Buffer.concat(currentBuffer.chunks) : currentBuffer.chunks[0];
          yield {
            partNumber,
            data: dataChunk.subarray(0, partSize)
          };
          currentBuffer.chunks = [dataChunk.subarray(partSize)];
          currentBuffer.length = currentBuffer.chunks[0].byteLength;
          partNumber += 1;
        }
      }
      yield {
        partNumber,
        data: currentBuffer.chunks.length !== 1 ? Buffer.concat(currentBuffer.chunks) : currentBuffer.chunks[0],
        lastPart: true
      };
    }
    async function* getChunkUint8Array(data, partSize) {
      let partNumber = 1;
      let startByte = 0;
      let endByte = partSize;
      while (endByte < data.byteLength) {
        yield {
          partNumber,
          data: data.subarray(startByte, endByte)
        };
        partNumber += 1;
        startByte = endByte;
        endByte = startByte + partSize;
      }
      yield {
        partNumber,
        data: data.subarray(startByte),
        lastPart: true
      };
    }
    async function* getDataReadable(data) {
      for await (const chunk of data) {
        if (Buffer.isBuffer(chunk) || chunk instanceof Uint8Array) {
          yield chunk;
        } else {
          yield Buffer.from(chunk);
        }
      }
    }
    async function* getDataReadableStream(data) {
      const reader = data.getReader();
      try {
        while (true) {
          const { done, value } = await reader.read();
          if (done) {
            return;
          }
          if (Buffer.isBuffer(value) || value instanceof Uint8Array) {
            yield value;
          } else {
            yield Buffer.from(value);
          }
        }
      } catch (e) {
        throw e;
      } finally {
        reader.releaseLock();
      }
    }
    var getChunk = (data, partSize) => {
      if (data instanceof Uint8Array) {
        return getChunkUint8Array(data, partSize);
      }
      if (data instanceof Readable) {
        return getChunkStream(data, partSize, getDataReadable);
      }
      if (data instanceof String || typeof data === "string") {
        return getChunkUint8Array(Buffer.from(data), partSize);
      }
      if (typeof data.stream === "function") {
        return getChunkStream(data.stream(), partSize, getDataReadableStream);
      }
      if (data instanceof ReadableStream) {
        return getChunkStream(data, partSize, getDataReadableStream);
      }
      throw new Error("Body Data is unsupported format, expected data to be one of: string | Uint8Array | Buffer | Readable | ReadableStream | Blob;.");
    };
    var Upload2 = class _Upload extends EventEmitter {
      static MIN_PART_SIZE = 1024 * 1024 * 5;
      MAX_PARTS = 1e4;
      queueSize = 4;
      partSize;
      leavePartsOnError = false;
      tags = [];
      client;
      params;
      totalBytes;
      totalBytesSource;
      bytesUploadedSoFar;
      abortController;
      concurrentUploaders = [];
      createMultiPartPromise;
      abortMultipartUploadCommand = null;
      uploadedParts = [];
      uploadEnqueuedPartsCount = 0;
      expectedPartsCount;
      uploadId;
      uploadEvent;
      isMultiPart = true;
      singleUploadResult;
      sent = false;
      constructor(options) {
        super();
        this.queueSize = options.queueSize || this.queueSize;
        this.leavePartsOnError = options.leavePartsOnError || this.leavePartsOnError;
        this.tags = options.tags || this.tags;
        this.client = options.client;
        this.params = options.params;
        if (!this.params) {
          throw new Error(`InputError: Upload requires params to be passed to upload.`);
        }
        this.totalBytes = this.params.ContentLength ?? byteLength(this.params.Body);
        this.totalBytesSource = byteLengthSource(this.params.Body, this.params.ContentLength);
        this.bytesUploadedSoFar = 0;
        this.abortController = options.abortController ?? new AbortController();
        this.partSize = options.partSize || Math.max(_Upload.MIN_PART_SIZE, Math.ceil((this.totalBytes || 0) / this.MAX_PARTS));
        if (this.totalBytes !== void 0) {
          this.expectedPartsCount = Math.ceil(this.totalBytes / this.partSize);
        }
        this.__validateInput();
      }
      async abort() {
        this.abortController.abort();
      }
      async done() {
        if (this.sent) {
          throw new Error("@aws-sdk/lib-storage: this instance of Upload has already executed .done(). Create a new instance.");
        }
        this.sent = true;
        return await Promise.race([this.__doMultipartUpload(), this.__abortTimeout(this.abortController.signal)]);
      }
      on(event, listener) {
        this.uploadEvent = event;
        return super.on(event, listener);
      }
      async __uploadUsingPut(dataPart) {
        this.isMultiPart = false;
        const params = { ...this.params, Body: dataPart.data };
        const clientConfig = this.client.config;
        const requestHandler = clientConfig.requestHandler;
        const eventEmitter = requestHandler instanceof EventEmitter ? requestHandler : null;
        const uploadEventListener = (event) => {
          this.bytesUploadedSoFar = event.loaded;
          this.totalBytes = event.total;
          this.__notifyProgress({
            loaded: this.bytesUploadedSoFar,
            total: this.totalBytes,
            part: dataPart.partNumber,
            Key: this.params.Key,
            Bucket: this.params.Bucket
          });
        };
        if (eventEmitter !== null) {
          eventEmitter.on("xhr.upload.progress", uploadEventListener);
        }
        const resolved = await Promise.all([this.client.send(new PutObjectCommand(params)), clientConfig?.endpoint?.()]);
        const putResult = resolved[0];
        let endpoint = resolved[1];
        if (!endpoint) {
          endpoint = toEndpointV1(await getEndpointFromInstructions(params, PutObjectCommand, {
            ...clientConfig
          }));
        }
        if (!endpoint) {
          throw new Error('Could not resolve endpoint from S3 "client.config.endpoint()" nor EndpointsV2.');
        }
        if (eventEmitter !== null) {
          eventEmitter.off("xhr.upload.progress", uploadEventListener);
        }
        const locationKey = this.params.Key.split("/").map((segment) => extendedEncodeURIComponent(segment)).join("/");
        const locationBucket = extendedEncodeURIComponent(this.params.Bucket);
        const Location = (() => {
          const endpointHostnameIncludesBucket = endpoint.hostname.startsWith(`${locationBucket}.`);
          const forcePathStyle = this.client.config.forcePathStyle;
          const optionalPort = endpoint.port ? `:${endpoint.port}` : ``;
          if (forcePathStyle) {
            return `${endpoint.protocol}//${endpoint.hostname}${optionalPort}/${locationBucket}/${locationKey}`;
          }
          if (endpointHostnameIncludesBucket) {
            return `${endpoint.protocol}//${endpoint.hostname}${optionalPort}/${locationKey}`;
          }
          return `${endpoint.protocol}//${locationBucket}.${endpoint.hostname}${optionalPort}/${locationKey}`;
        })();
        this.singleUploadResult = {
          ...putResult,
          Bucket: this.params.Bucket,
          Key: this.params.Key,
          Location
        };
        const totalSize = byteLength(dataPart.data);
        this.__notifyProgress({
          loaded: totalSize,
          total: totalSize,
          part: 1,
          Key: this.params.Key,
          Bucket: this.params.Bucket
        });
      }
      async __createMultipartUpload() {
        const requestChecksumCalculation = await this.client.config.requestChecksumCalculation();
        if (!this.createMultiPartPromise) {
          const createCommandParams = { ...this.params, Body: void 0 };
          if (requestChecksumCalculation === "WHEN_SUPPORTED") {
            createCommandParams.ChecksumAlgorithm = this.params.ChecksumAlgorithm || ChecksumAlgorithm.CRC32;
          }
          this.createMultiPartPromise = this.client.send(new CreateMultipartUploadCommand(createCommandParams)).then((createMpuResponse) => {
            this.abortMultipartUploadCommand = new AbortMultipartUploadCommand({
              Bucket: this.params.Bucket,
              Key: this.params.Key,
              UploadId: createMpuResponse.UploadId
            });
            return createMpuResponse;
          });
        }
        return this.createMultiPartPromise;
      }
      async __doConcurrentUpload(dataFeeder) {
        for await (const dataPart of dataFeeder) {
          if (this.uploadEnqueuedPartsCount > this.MAX_PARTS) {
            throw new Error(`Exceeded ${this.MAX_PARTS} parts in multipart upload to Bucket: ${this.params.Bucket} Key: ${this.params.Key}.`);
          }
          if (this.abortController.signal.aborted) {
            return;
          }
          if (dataPart.partNumber === 1 && dataPart.lastPart) {
            return await this.__uploadUsingPut(dataPart);
          }
          if (!this.uploadId) {
            const { UploadId } = await this.__createMultipartUpload();
            this.uploadId = UploadId;
            if (this.abortController.signal.aborted) {
              return;
            }
          }
          const partSize = byteLength(dataPart.data) || 0;
          const requestHandler = this.client.config.requestHandler;
          const eventEmitter = requestHandler instanceof EventEmitter ? requestHandler : null;
          let lastSeenBytes = 0;
          const uploadEventListener = (event, request) => {
            const requestPartSize = Number(request.query["partNumber"]) || -1;
            if (requestPartSize !== dataPart.partNumber) {
              return;
            }
            if (event.total && partSize) {
              this.bytesUploadedSoFar += event.loaded - lastSeenBytes;
              lastSeenBytes = event.loaded;
            }
            this.__notifyProgress({
              loaded: this.bytesUploadedSoFar,
              total: this.totalBytes,
              part: dataPart.partNumber,
              Key: this.params.Key,
              Bucket: this.params.Bucket
            });
          };
          if (eventEmitter !== null) {
            eventEmitter.on("xhr.upload.progress", uploadEventListener);
          }
          this.uploadEnqueuedPartsCount += 1;
          this.__validateUploadPart(dataPart);
          const partResult = await this.client.send(new UploadPartCommand({
            ...this.params,
            ContentLength: void 0,
            UploadId: this.uploadId,
            Body: dataPart.data,
            PartNumber: dataPart.partNumber
          }));
          if (eventEmitter !== null) {
            eventEmitter.off("xhr.upload.progress", uploadEventListener);
          }
          if (this.abortController.signal.aborted) {
            return;
          }
          if (!partResult.ETag) {
            throw new Error(`Part ${dataPart.partNumber} is missing ETag in UploadPart response. Missing Bucket CORS configuration for ETag header?`);
          }
          this.uploadedParts.push({
            PartNumber: dataPart.partNumber,
            ETag: partResult.ETag,
            ...partResult.ChecksumCRC32 && { ChecksumCRC32: partResult.ChecksumCRC32 },
            ...partResult.ChecksumCRC32C && { ChecksumCRC32C: partResult.ChecksumCRC32C },
            ...partResult.ChecksumSHA1 && { ChecksumSHA1: partResult.ChecksumSHA1 },
            ...partResult.ChecksumSHA256 && { ChecksumSHA256: partResult.ChecksumSHA256 }
          });
          if (eventEmitter === null) {
            this.bytesUploadedSoFar += partSize;
          }
          this.__notifyProgress({
            loaded: this.bytesUploadedSoFar,
            total: this.totalBytes,
            part: dataPart.partNumber,
            Key: this.params.Key,
            Bucket: this.params.Bucket
          });
        }
      }
      async __doMultipartUpload() {
        const dataFeeder = getChunk(this.params.Body, this.partSize);
        const concurrentUploaderFailures = [];
        for (let index = 0; index < this.queueSize; index++) {
          const currentUpload = this.__doConcurrentUpload(dataFeeder).catch((err) => {
            concurrentUploaderFailures.push(err);
          });
          this.concurrentUploaders.push(currentUpload);
        }
        await Promise.all(this.concurrentUploaders);
        if (concurrentUploaderFailures.length >= 1) {
          await this.markUploadAsAborted();
          throw concurrentUploaderFailures[0];
        }
        if (this.abortController.signal.aborted) {
          await this.markUploadAsAborted();
          throw Object.assign(new Error("Upload aborted."), { name: "AbortError" });
        }
        let result;
        if (this.isMultiPart) {
          const { expectedPartsCount, uploadedParts, totalBytes, totalBytesSource } = this;
          if (totalBytes !== void 0 && expectedPartsCount !== void 0 && uploadedParts.length !== expectedPartsCount) {
            await this.markUploadAsAborted();
            throw new Error(`Expected ${expectedPartsCount} part(s) but uploaded ${uploadedParts.length} part(s).
The expected part count is based on the byte-count of the input.params.Body,
which was read from ${totalBytesSource} and is ${totalBytes}.
If this is not correct, provide an override value by setting a number
to input.params.ContentLength in bytes.
`);
          }
          this.uploadedParts.sort((a, b) => a.PartNumber - b.PartNumber);
          const uploadCompleteParams = {
            ...this.params,
            Body: void 0,
            UploadId: this.uploadId,
            MultipartUpload: {
              Parts: this.uploadedParts
            }
          };
          try {
            result = await this.client.send(new CompleteMultipartUploadCommand(uploadCompleteParams));
          } catch (e) {
            await this.markUploadAsAborted().catch((abortError) => {
              if (e instanceof Error && e.cause === void 0) {
                e.cause = abortError;
              }
            });
            throw e;
          }
          if (typeof result?.Location === "string" && result.Location.includes("%2F")) {
            result.Location = result.Location.replace(/%2F/g, "/");
          }
        } else {
          result = this.singleUploadResult;
        }
        this.abortMultipartUploadCommand = null;
        if (this.tags.length) {
          await this.client.send(new PutObjectTaggingCommand({
            ...this.params,
            Tagging: {
              TagSet: this.tags
            }
          }));
        }
        return result;
      }
      async markUploadAsAborted() {
        if (this.uploadId && !this.leavePartsOnError && null !== this.abortMultipartUploadCommand) {
          await this.client.send(this.abortMultipartUploadCommand);
          this.abortMultipartUploadCommand = null;
        }
      }
      __notifyProgress(progress) {
        if (this.uploadEvent) {
          this.emit(this.uploadEvent, progress);
        }
      }
      async __abortTimeout(abortSignal) {
        return new Promise((resolve, reject) => {
          abortSignal.onabort = () => {
            const abortError = new Error("Upload aborted.");
            abortError.name = "AbortError";
            reject(abortError);
          };
        });
      }
      __validateUploadPart(dataPart) {
        const actualPartSize = byteLength(dataPart.data);
        if (actualPartSize === void 0) {
          throw new Error(`A dataPart was generated without a measurable data chunk size for part number ${dataPart.partNumber}`);
        }
        if (dataPart.partNumber === 1 && dataPart.lastPart) {
          return;
        }
        if (!dataPart.lastPart && actualPartSize !== this.partSize) {
          throw new Error(`The byte size for part number ${dataPart.partNumber}, size ${actualPartSize} does not match expected size ${this.partSize}`);
        }
      }
      __validateInput() {
        if (!this.client) {
          throw new Error(`InputError: Upload requires a AWS client to do uploads with.`);
        }
        if (this.partSize < _Upload.MIN_PART_SIZE) {
          throw new Error(`EntityTooSmall: Your proposed upload part size [${this.partSize}] is smaller than the minimum allowed size [${_Upload.MIN_PART_SIZE}] (5MB)`);
        }
        if (this.queueSize < 1) {
          throw new Error(`Queue size: Must have at least one uploading queue.`);
        }
      }
    };
    exports.Upload = Upload2;
  }
});

// src/backup/upload.ts
var import_client_s3 = __toESM(require_dist_cjs(), 1);
var import_lib_storage = __toESM(require_dist_cjs2(), 1);
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, existsSync } from "node:fs";
import { mkdir, open, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { Agent } from "node:https";
import { dirname } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
var TERMINATION_LOG = "/dev/termination-log";
var PART_SIZE = 16 * 1024 * 1024;
function digestFile(path) {
  return digestStream(createReadStream(path));
}
async function digestStream(stream) {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of stream) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { sha256: hash.digest("hex"), size };
}
function checkReadBack(location, written, read) {
  if (read.size !== written.size || read.sha256 !== written.sha256) {
    throw new Error(
      `backup-upload: ${location} read back differs from the snapshot: ${read.size} bytes, sha256 ${read.sha256}; written ${written.size} bytes, sha256 ${written.sha256}`
    );
  }
}
async function writeAtomically(source, to, dirMode) {
  await mkdir(dirname(to), { recursive: true, ...dirMode === void 0 ? {} : { mode: dirMode } });
  const partial = `${to}.partial`;
  const hash = createHash("sha256");
  let size = 0;
  const tap = new Transform({
    transform(chunk, _enc, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    }
  });
  try {
    await pipeline(source, tap, createWriteStream(partial, { mode: 384 }));
    const fh = await open(partial, "r");
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(partial, to);
    const dir = await open(dirname(to), "r");
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  } catch (err) {
    await rm(partial, { force: true });
    throw err;
  }
  return { sha256: hash.digest("hex"), size };
}
async function storeSnapshot(args, env = process.env, hooks = {}) {
  const info = await stat(args.file).catch(() => void 0);
  if (info === void 0 || !info.isFile())
    throw new Error(`backup-upload: --file ${args.file} is not a file`);
  const t = args.target;
  if (t.kind === "file") {
    const written = await writeAtomically(createReadStream(args.file), t.path);
    const location = `file://${t.path}`;
    await hooks.afterWrite?.(location);
    checkReadBack(location, written, await digestFile(t.path));
    return { location, ...written };
  }
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    throw new Error(
      "backup-upload: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set (from the Secret named in spec.destination.s3.credentialsSecret)"
    );
  }
  const { sha256, size } = await digestFile(args.file);
  const client = new import_client_s3.S3Client({
    region: t.region,
    ...t.endpoint === void 0 ? {} : { endpoint: t.endpoint },
    forcePathStyle: t.forcePathStyle,
    credentials: { accessKeyId, secretAccessKey },
    ...t.caFile === void 0 ? {} : { requestHandler: { httpsAgent: new Agent({ ca: await readFile(t.caFile, "utf8") }) } }
  });
  try {
    await new import_lib_storage.Upload({
      client,
      partSize: PART_SIZE,
      queueSize: 2,
      leavePartsOnError: false,
      params: {
        Bucket: t.bucket,
        Key: t.key,
        Body: createReadStream(args.file),
        ContentType: "application/octet-stream",
        Metadata: { sha256 }
      }
    }).done();
    await hooks.afterWrite?.(`s3://${t.bucket}/${t.key}`);
    const object = await client.send(new import_client_s3.GetObjectCommand({ Bucket: t.bucket, Key: t.key }));
    if (object.Body === void 0)
      throw new Error(`backup-upload: s3://${t.bucket}/${t.key} read back empty`);
    checkReadBack(
      `s3://${t.bucket}/${t.key}`,
      { sha256, size },
      await digestStream(object.Body)
    );
  } finally {
    client.destroy();
  }
  return { location: `s3://${t.bucket}/${t.key}`, size, sha256 };
}
async function backupUploadCommand(argv, terminationLog = TERMINATION_LOG) {
  const result = await storeSnapshot(parseUploadArgs(argv));
  const message = JSON.stringify(result);
  if (existsSync(terminationLog)) await writeFile(terminationLog, message);
  process.stdout.write(`${message}
`);
  return result;
}

export {
  TERMINATION_LOG,
  PART_SIZE,
  digestFile,
  writeAtomically,
  storeSnapshot,
  backupUploadCommand
};
