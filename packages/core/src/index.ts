/**
 * @capstan/core: the public API. Everything an operator imports comes from here; the rest is internal
 * (reachable only by core's own tests). Grouped as controller-runtime's packages are. Each runtime name is listed in
 * `src/exports.test.ts` too, which checks the built package against that list: a new export is a decision.
 *
 * @module @capstan/core
 */

export { type CustomResourceOptions, customResourceDefinition, type PrinterColumn } from "./api/crd.ts";
// api: kinds (type descriptors) and the object model
export {
  ConfigMap,
  type ConfigMapObject,
  CronJob,
  CustomResourceDefinition,
  type CustomResourceDefinitionObject,
  Deployment,
  defineKind,
  EndpointSlice,
  Job,
  type JobObject,
  type JSONSchemaProps,
  type Kind,
  type KindSpec,
  KubeEvent,
  Lease,
  Namespace,
  NetworkPolicy,
  type NetworkPolicyObject,
  type ObjectOf,
  PersistentVolumeClaim,
  type PersistentVolumeClaimObject,
  Pod,
  PodDisruptionBudget,
  type PodDisruptionBudgetObject,
  type PodObject,
  Role,
  RoleBinding,
  type RoleBindingObject,
  type RoleObject,
  Secret,
  type SecretObject,
  Service,
  ServiceAccount,
  type ServiceAccountObject,
  type ServiceObject,
  StatefulSet,
  type StatefulSetObject,
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
  type Wire,
  type WithStatus,
} from "./api/object.ts";
export {
  conditionsSchema,
  type Defaulted,
  GO_DURATION_PATTERN,
  goDurationSchema,
  type PodPlacement,
  parseGoDuration,
  podPlacementProperties,
  type ResourceQuantities,
  resourcesSchema,
  STORAGE_SIZE_PATTERN,
  storageSizeBytes,
  stringMapSchema,
  type Toleration,
} from "./api/schema.ts";
// cache: shared informers and the reconciler's read path
export {
  type Cache,
  type CacheListOptions,
  CacheNotSyncedError,
  type CacheOptions,
  type CacheReadOptions,
} from "./cache/cache.ts";
export type { EventHandler, Informer, InformerOptions } from "./cache/informer.ts";
export {
  type CacheSelector,
  InformerFactory,
  type InformerFactoryOptions,
} from "./cache/informer-factory.ts";
export type { ListerWatcher, Scope } from "./cache/list-watch.ts";
export { MANAGED_BY_LABEL, managedBySelectors } from "./cache/managed-by.ts";
export type { IndexFunc, ReadStore } from "./cache/store.ts";
// server-side apply without steady-state writes
export { type ApplyResult, applyIfChanged, needsApply, stableHash } from "./client/apply.ts";
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
  isInvalid,
  isNotFound,
  TerminalError,
} from "./client/errors.ts";
export type { KubeConfigLike } from "./client/kubeconfig.ts";
export { metadataOnly, type PartialObjectMetadata } from "./client/metadata-only.ts";
export { type RetryOptions, retryOnConflict } from "./client/retry.ts";
// controller: reconcilers, watches and predicates
export {
  Controller,
  type ControllerOptions,
  type ControllerStartOptions,
  controller,
  type InFlightReconcile,
  type Owned,
  owns,
  type ReconcileRequest,
  type Reconciler,
  type Result,
  requestFromLabel,
  type Watch,
  watch,
} from "./controller/controller.ts";
export type { ErrorAction, ErrorEvent, ErrorPolicy } from "./controller/error-policy.ts";
export {
  and,
  annotationsChanged,
  generationChanged,
  labelsChanged,
  or,
  type Predicate,
} from "./controller/predicates.ts";
export type { ReconcileContext } from "./controller/reconcile-context.ts";
// helpers: the TLS kit (a CA, the certificates it signs, and when to renew them), claim retention
export {
  type CertificateInfo,
  type CertificatePair,
  type CertificateUsage,
  type CreateCAOptions,
  certificateInfo,
  createCA,
  type IssueOptions,
  issueCertificate,
  type RenewalCriteria,
  renewalReason,
  signedBy,
  splitPemBundle,
} from "./helpers/certificates.ts";
export {
  applyClaimRetention,
  type ClaimRetention,
  type ClaimRetentionSchema,
  claimBelongsTo,
  claimRetentionPatch,
  claimRetentionSchema,
  retainedClaim,
} from "./helpers/claim-retention.ts";
// helpers: status conditions, finalizers, owner references, events, raft quorums, Secret values
export {
  type Condition,
  type ConditionInput,
  conditionsEqual,
  findCondition,
  isConditionTrue,
  removeCondition,
  setCondition,
} from "./helpers/conditions.ts";
export type { EventObject, EventRecorder, EventRecorderOptions } from "./helpers/event-recorder.ts";
export { type FencedPod, type FenceOptions, type FenceWait, fence } from "./helpers/fence.ts";
export {
  addFinalizer,
  type FinalizerResult,
  handleFinalizer,
  hasFinalizer,
  removeFinalizer,
} from "./helpers/finalizers.ts";
export { AlreadyOwnedError, setControllerReference } from "./helpers/owner-references.ts";
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
export { quorum } from "./helpers/quorum.ts";
export { oldestOpenRequest } from "./helpers/requests.ts";
export { secretData } from "./helpers/secret-data.ts";
export { statusMergePatch } from "./helpers/status-patch.ts";
export { type PlannedStep, type StepConditions, stepConditions } from "./helpers/step-conditions.ts";
// manager: runs controllers and runnables with leader election, metrics and probes
export {
  type CommandLine,
  type CommandLineSpec,
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
export { CoreMetrics } from "./metrics/metrics.ts";
export {
  type MetricObject,
  type ObjectCounter,
  type ObjectGauge,
  type ObjectLabels,
  type ObjectMetricConfig,
  ObjectMetrics,
  type ObjectSeries,
  type WithObjectLabels,
} from "./metrics/object-metrics.ts";
export type { RateLimiter } from "./queue/rate-limiter.ts";
export { createLogger, type Logger, type LoggerOptions, silentLogger } from "./util/logger.ts";
