/**
 * @capstan/core/testing: the test kit for operator authors. A scripted in-memory API server and reconcileOnce,
 * a harness that runs one reconcile against it and reports the writes made; asApplied for planners' table tests.
 * No cluster needed.
 *
 * @module @capstan/core/testing
 */

export { asApplied } from "./as-applied.ts";
export {
  collectionPath,
  FakeApiServer,
  type FakeApiServerOptions,
  type FaultOptions,
  type PatchKind,
  type RecordedRequest,
  type Reply,
  type RequestMatch,
  type Script,
  statusBody,
  type Verb,
  WRITE_VERBS,
} from "./fake-api-server.ts";
export {
  type ReconcileOnceOptions,
  type ReconcileRun,
  type RecordedEvent,
  reconcileOnce,
  type Write,
} from "./reconcile-once.ts";
