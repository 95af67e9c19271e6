import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);
import {
  backupDeleteCommand,
  deleteS3Object,
  removeSnapshotFile
} from "./chunk-FDDPOAO3.js";
import "./chunk-27BPVPNY.js";
import "./chunk-QWCNFEPG.js";
import "./chunk-Z6WN2YAM.js";
import "./chunk-7BHEFNLD.js";
import "./chunk-ANXZA7FK.js";
export {
  backupDeleteCommand,
  deleteS3Object,
  removeSnapshotFile
};
