import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);
import {
  PART_SIZE,
  TERMINATION_LOG,
  backupUploadCommand,
  digestFile,
  storeSnapshot,
  writeAtomically
} from "./chunk-PXDUKDHE.js";
import "./chunk-27BPVPNY.js";
import "./chunk-QWCNFEPG.js";
import "./chunk-Z6WN2YAM.js";
import "./chunk-7BHEFNLD.js";
import "./chunk-ANXZA7FK.js";
export {
  PART_SIZE,
  TERMINATION_LOG,
  backupUploadCommand,
  digestFile,
  storeSnapshot,
  writeAtomically
};
