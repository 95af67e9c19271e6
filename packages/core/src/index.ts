/**
 * @capstan/core: the public API. Everything an operator imports comes from here; the rest is internal
 * (reachable only by core's own tests). Grouped as controller-runtime's packages are.
 *
 * @module @capstan/core
 */

// api: kinds (type descriptors) and the object model
export {
  ConfigMap,
  CronJob,
  CustomResourceDefinition,
  type CustomResourceDefinitionObject,
  Deployment,
  defineKind,
  EndpointSlice,
  Job,
  type JSONSchemaProps,
  type Kind,
  type KindSpec,
  KubeEvent,
  Lease,
  Namespace,
  NetworkPolicy,
  type ObjectOf,
  PersistentVolumeClaim,
  Pod,
  PodDisruptionBudget,
  Role,
  RoleBinding,
  Secret,
  Service,
  ServiceAccount,
  StatefulSet,
} from "./api/kinds.ts";
export {
  type LabelMatcher,
  type LabelSelector,
  type LabelSelectorInput,
  type LabelSelectorRequirement,
  labelSelector,
} from "./api/labels.ts";
export {
  type KubeObject,
  keyOf,
  type ObjectKey,
  type ObjectMeta,
  type OwnerReference,
  parseKey,
  type Wire,
  type WithStatus,
} from "./api/object.ts";
export {
  conditionSchema,
  conditionsSchema,
  GO_DURATION_PATTERN,
  goDurationSchema,
  type PodPlacement,
  passThroughObjectSchema,
  podPlacementProperties,
  QUANTITY_PATTERN,
  quantitySchema,
  type ResourceQuantities,
  resourcesSchema,
  STORAGE_SIZE_PATTERN,
  storageSizeBytes,
  stringMapSchema,
  type Toleration,
  tolerationsSchema,
} from "./api/schema.ts";
// cache: shared informers and the reconciler's read path
export {
  Cache,
  type CacheListOptions,
  CacheNotSyncedError,
  type CacheOptions,
  type CacheReadOptions,
} from "./cache/cache.ts";
export { type EventHandler, Informer, type InformerOptions } from "./cache/informer.ts";
export {
  type CacheSelector,
  InformerFactory,
  type InformerFactoryOptions,
} from "./cache/informer-factory.ts";
export { clientListerWatcher, type ListerWatcher, type Scope } from "./cache/list-watch.ts";
export { MANAGED_BY_LABEL, managedBySelectors } from "./cache/managed-by.ts";
export {
  dropManagedFields,
  type IndexFunc,
  NAMESPACE_INDEX,
  OWNER_UID_INDEX,
  type ReadStore,
} from "./cache/store.ts";
export {
  APPLIED_HASH_ANNOTATION,
  type ApplyResult,
  applyIfChanged,
  desiredHash,
  isSubset,
  needsApply,
  stableHash,
} from "./client/apply.ts";
// client: reads and writes against the API server
export {
  type ApplyOptions,
  Client,
  type ClientOptions,
  type DeleteOptions,
  type ListOptions,
  type ListResult,
  type PatchType,
  type WatchEvent,
  type WatchOptions,
  type WriteOptions,
} from "./client/client.ts";
export {
  ApiError,
  type ApiStatus,
  isAlreadyExists,
  isApiError,
  isConflict,
  isGone,
  isInvalid,
  isNotFound,
  isTerminalError,
  isTooManyRequests,
  TerminalError,
} from "./client/errors.ts";
export { type KubeConfigLike, loadKubeConfig } from "./client/kubeconfig.ts";
export { isMetadataOnly, metadataOnly, type PartialObjectMetadata } from "./client/metadata-only.ts";
export { type RetryOptions, retryOn, retryOnConflict } from "./client/retry.ts";
// controller: reconcilers, watches and predicates
export {
  Controller,
  type ControllerOptions,
  type ControllerStartOptions,
  controller,
  type InFlightReconcile,
  type Owned,
  owns,
  type ReconcileContext,
  type ReconcileRequest,
  type Reconciler,
  type Result,
  requestFromLabel,
  type Watch,
  watch,
} from "./controller/controller.ts";
export {
  and,
  annotationsChanged,
  generationChanged,
  hasLabels,
  labelsChanged,
  or,
  type Predicate,
} from "./controller/predicates.ts";
export {
  CA_VALIDITY_MS,
  type CertificateInfo,
  type CertificatePair,
  type CertificateUsage,
  type CreateCAOptions,
  certificateInfo,
  createCA,
  type IssueOptions,
  issueCertificate,
  parseGoDuration,
  type RenewalCriteria,
  renewalReason,
  type SelfSignedOptions,
  selfSignedCertificate,
  signedBy,
  splitPemBundle,
} from "./helpers/certificates.ts";
export {
  applyClaimRetention,
  type ClaimRetention,
  claimBelongsTo,
  claimRetentionPatch,
  claimRetentionSchema,
  retainedClaim,
} from "./helpers/claim-retention.ts";
// helpers: status conditions, finalizers, owner references, events
export {
  type Condition,
  type ConditionInput,
  conditionsEqual,
  findCondition,
  isConditionTrue,
  removeCondition,
  setCondition,
} from "./helpers/conditions.ts";
export { type EventObject, EventRecorder, type EventRecorderOptions } from "./helpers/event-recorder.ts";
export { type FencedPod, type FenceOptions, type FenceWait, fence } from "./helpers/fence.ts";
export {
  addFinalizer,
  type FinalizerResult,
  handleFinalizer,
  hasFinalizer,
  isBeingDeleted,
  removeFinalizer,
} from "./helpers/finalizers.ts";
export {
  AlreadyOwnedError,
  getControllerOf,
  isControlledBy,
  ownerReferenceFor,
  setControllerReference,
  setOwnerReference,
} from "./helpers/owner-references.ts";
export { type AnnotatePodsOptions, annotatePods } from "./helpers/pod-annotations.ts";
export {
  type Affinity,
  type ContainerSecurityContext,
  type PodSecurityContext,
  type ResourceRequirements,
  resourceRequirements,
  restrictedContainerSecurityContext,
  restrictedPodSecurityContext,
  spreadOverNodes,
} from "./helpers/pod-spec.ts";
export { oldestOpenRequest } from "./helpers/requests.ts";
export { statusMergePatch } from "./helpers/status-patch.ts";
// leader: Lease leader election
export {
  defaultLeaderIdentity,
  type LeaderCallbacks,
  LeaderElector,
  type LeaderElectorOptions,
} from "./leader/leader-election.ts";
export {
  type LeaderElectionRecord,
  LeaseLock,
  type LeaseLockOptions,
  type ResourceLock,
} from "./leader/lease-lock.ts";
// manager: runs controllers and runnables with leader election, metrics and probes
export {
  type CommandLine,
  CommandLineError,
  type CommandLineSpec,
  commandLineUsage,
  type ExtraFlag,
  operatorCommandLine,
  parseCommandLine,
} from "./manager/command-line.ts";
export {
  type LeaderElectionOptions,
  Manager,
  type ManagerOptions,
  type Runnable,
  shutdownSignal,
} from "./manager/manager.ts";
export type { MetricsServerOptions } from "./manager/metrics-server.ts";
export type { Check } from "./manager/probes.ts";
export { CoreMetrics, globalMetrics } from "./metrics/metrics.ts";
export {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  type RateLimiter,
} from "./queue/rate-limiter.ts";
// queue: the rate-limited de-duplicating work queue
export { WorkQueue, type WorkQueueOptions } from "./queue/workqueue.ts";
export { createLogger, type Logger, type LoggerOptions, silentLogger } from "./util/logger.ts";
