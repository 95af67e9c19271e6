// Kind descriptors: what the client, informers and controllers need to address a resource type.
import type {
  EventsV1Event,
  V1ConfigMap,
  V1CronJob,
  V1Deployment,
  V1EndpointSlice,
  V1Job,
  V1Lease,
  V1Namespace,
  V1NetworkPolicy,
  V1NetworkPolicyIngressRule,
  V1NetworkPolicyPeer,
  V1NetworkPolicySpec,
  V1PersistentVolumeClaim,
  V1Pod,
  V1PodDisruptionBudget,
  V1Role,
  V1RoleBinding,
  V1Secret,
  V1Service,
  V1ServiceAccount,
  V1StatefulSet,
} from "@kubernetes/client-node";
import type { KubeObject, Wire } from "./object.ts";

/** A resource type. `T` is the TypeScript shape of one object of the kind. */
export interface Kind<T extends KubeObject = KubeObject> {
  /** API group; "" for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** Lower-case plural used in URLs, e.g. "configmaps". */
  readonly plural: string;
  readonly namespaced: boolean;
  /** "v1" or "group/version". */
  readonly apiVersion: string;
  /** Phantom field carrying the object type; never set at run time. */
  readonly __type?: T;
}

/** The object type a kind describes. */
export type ObjectOf<K> = K extends Kind<infer T> ? T : never;

export interface KindSpec {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

/** Describes a resource type, built-in or custom: `defineKind<EtcdCluster>({ group: "etcd.capstan.dev", ... })`. */
export function defineKind<T extends KubeObject = KubeObject>(spec: KindSpec): Kind<T> {
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(spec.plural)) {
    throw new Error(`defineKind(${spec.kind}): plural "${spec.plural}" must be a lower-case DNS label`);
  }
  if (spec.version === "") throw new Error(`defineKind(${spec.kind}): version is required`);
  const apiVersion = spec.group === "" ? spec.version : `${spec.group}/${spec.version}`;
  return Object.freeze({ ...spec, apiVersion });
}

/** "group/version/kind" (core group: "v1/Kind"); a stable identifier for maps and logs. */
export function kindId(kind: Kind): string {
  return `${kind.apiVersion}/${kind.kind}`;
}

type K<T> = Wire<T> & KubeObject;

/** The core/v1 Namespace kind (cluster-scoped). */
export const Namespace = defineKind<K<V1Namespace>>({
  group: "",
  version: "v1",
  kind: "Namespace",
  plural: "namespaces",
  namespaced: false,
});
/** The core/v1 Pod kind. */
export const Pod = defineKind<K<V1Pod>>({
  group: "",
  version: "v1",
  kind: "Pod",
  plural: "pods",
  namespaced: true,
});
/** The core/v1 Service kind. */
export const Service = defineKind<K<V1Service>>({
  group: "",
  version: "v1",
  kind: "Service",
  plural: "services",
  namespaced: true,
});
/** The core/v1 ConfigMap kind. */
export const ConfigMap = defineKind<K<V1ConfigMap>>({
  group: "",
  version: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
});
/** The core/v1 Secret kind (`data` values are base64, as on the wire). */
export const Secret = defineKind<K<V1Secret>>({
  group: "",
  version: "v1",
  kind: "Secret",
  plural: "secrets",
  namespaced: true,
});
/** The core/v1 PersistentVolumeClaim kind. */
export const PersistentVolumeClaim = defineKind<K<V1PersistentVolumeClaim>>({
  group: "",
  version: "v1",
  kind: "PersistentVolumeClaim",
  plural: "persistentvolumeclaims",
  namespaced: true,
});
/** The core/v1 ServiceAccount kind. */
export const ServiceAccount = defineKind<K<V1ServiceAccount>>({
  group: "",
  version: "v1",
  kind: "ServiceAccount",
  plural: "serviceaccounts",
  namespaced: true,
});
/** The apps/v1 StatefulSet kind. */
export const StatefulSet = defineKind<K<V1StatefulSet>>({
  group: "apps",
  version: "v1",
  kind: "StatefulSet",
  plural: "statefulsets",
  namespaced: true,
});
/** The apps/v1 Deployment kind. */
export const Deployment = defineKind<K<V1Deployment>>({
  group: "apps",
  version: "v1",
  kind: "Deployment",
  plural: "deployments",
  namespaced: true,
});
/** The batch/v1 Job kind. */
export const Job = defineKind<K<V1Job>>({
  group: "batch",
  version: "v1",
  kind: "Job",
  plural: "jobs",
  namespaced: true,
});
/** The batch/v1 CronJob kind. */
export const CronJob = defineKind<K<V1CronJob>>({
  group: "batch",
  version: "v1",
  kind: "CronJob",
  plural: "cronjobs",
  namespaced: true,
});
/** The policy/v1 PodDisruptionBudget kind. */
export const PodDisruptionBudget = defineKind<K<V1PodDisruptionBudget>>({
  group: "policy",
  version: "v1",
  kind: "PodDisruptionBudget",
  plural: "poddisruptionbudgets",
  namespaced: true,
});
/** client-node names an ingress rule's `from` `_from` (a reserved word in its generator); the wire says `from`. */
type NetworkPolicyIngressRule = Omit<Wire<V1NetworkPolicyIngressRule>, "_from"> & {
  from?: Wire<V1NetworkPolicyPeer>[];
};
type NetworkPolicyWire = Omit<K<V1NetworkPolicy>, "spec"> & {
  spec?: Omit<Wire<V1NetworkPolicySpec>, "ingress"> & { ingress?: NetworkPolicyIngressRule[] };
};
/** The networking.k8s.io/v1 NetworkPolicy kind (an ingress rule's peers in `from`, as on the wire). */
export const NetworkPolicy = defineKind<NetworkPolicyWire>({
  group: "networking.k8s.io",
  version: "v1",
  kind: "NetworkPolicy",
  plural: "networkpolicies",
  namespaced: true,
});
/** The rbac.authorization.k8s.io/v1 Role kind. */
export const Role = defineKind<K<V1Role>>({
  group: "rbac.authorization.k8s.io",
  version: "v1",
  kind: "Role",
  plural: "roles",
  namespaced: true,
});
/** The rbac.authorization.k8s.io/v1 RoleBinding kind. */
export const RoleBinding = defineKind<K<V1RoleBinding>>({
  group: "rbac.authorization.k8s.io",
  version: "v1",
  kind: "RoleBinding",
  plural: "rolebindings",
  namespaced: true,
});
/** The coordination.k8s.io/v1 Lease kind (leader election's lock). */
export const Lease = defineKind<K<V1Lease>>({
  group: "coordination.k8s.io",
  version: "v1",
  kind: "Lease",
  plural: "leases",
  namespaced: true,
});
/** The events.k8s.io/v1 Event kind, named so it does not shadow the DOM's `Event` (write Events with `ctx.recorder`). */
export const KubeEvent = defineKind<K<EventsV1Event>>({
  group: "events.k8s.io",
  version: "v1",
  kind: "Event",
  plural: "events",
  namespaced: true,
});
/** The discovery.k8s.io/v1 EndpointSlice kind. */
export const EndpointSlice = defineKind<K<V1EndpointSlice>>({
  group: "discovery.k8s.io",
  version: "v1",
  kind: "EndpointSlice",
  plural: "endpointslices",
  namespaced: true,
});
// The objects of the built-in kinds, as the client and the cache return them: one name each, so an operator's
// builders and reconcilers say `PodObject`, not `ObjectOf<typeof Pod>` (nor a local alias of it).
/** A core/v1 Pod (`ObjectOf<typeof Pod>`). */
export type PodObject = ObjectOf<typeof Pod>;
/** A core/v1 Service (`ObjectOf<typeof Service>`). */
export type ServiceObject = ObjectOf<typeof Service>;
/** A core/v1 ConfigMap (`ObjectOf<typeof ConfigMap>`). */
export type ConfigMapObject = ObjectOf<typeof ConfigMap>;
/** A core/v1 Secret (`ObjectOf<typeof Secret>`). */
export type SecretObject = ObjectOf<typeof Secret>;
/** A core/v1 PersistentVolumeClaim (`ObjectOf<typeof PersistentVolumeClaim>`). */
export type PersistentVolumeClaimObject = ObjectOf<typeof PersistentVolumeClaim>;
/** A core/v1 ServiceAccount (`ObjectOf<typeof ServiceAccount>`). */
export type ServiceAccountObject = ObjectOf<typeof ServiceAccount>;
/** A apps/v1 StatefulSet (`ObjectOf<typeof StatefulSet>`). */
export type StatefulSetObject = ObjectOf<typeof StatefulSet>;
/** A batch/v1 Job (`ObjectOf<typeof Job>`). */
export type JobObject = ObjectOf<typeof Job>;
/** A policy/v1 PodDisruptionBudget (`ObjectOf<typeof PodDisruptionBudget>`). */
export type PodDisruptionBudgetObject = ObjectOf<typeof PodDisruptionBudget>;
/** A networking.k8s.io/v1 NetworkPolicy (`ObjectOf<typeof NetworkPolicy>`). */
export type NetworkPolicyObject = ObjectOf<typeof NetworkPolicy>;
/** A rbac.authorization.k8s.io/v1 Role (`ObjectOf<typeof Role>`). */
export type RoleObject = ObjectOf<typeof Role>;
/** A rbac.authorization.k8s.io/v1 RoleBinding (`ObjectOf<typeof RoleBinding>`). */
export type RoleBindingObject = ObjectOf<typeof RoleBinding>;

/** A JSON schema as CRDs carry it (keys as on the wire, e.g. "x-kubernetes-validations"). */
export type JSONSchemaProps = { [key: string]: unknown };

/** apiextensions.k8s.io/v1 CustomResourceDefinition in its JSON form. */
export interface CustomResourceDefinitionObject extends KubeObject {
  spec: {
    group: string;
    scope: "Namespaced" | "Cluster";
    names: {
      kind: string;
      plural: string;
      singular?: string;
      shortNames?: string[];
      categories?: string[];
      listKind?: string;
    };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      deprecated?: boolean;
      schema?: { openAPIV3Schema: JSONSchemaProps };
      subresources?: {
        status?: Record<string, never>;
        scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
      };
      additionalPrinterColumns?: {
        name: string;
        type: string;
        jsonPath: string;
        description?: string;
        format?: string;
        priority?: number;
      }[];
    }[];
    conversion?: JSONSchemaProps;
    preserveUnknownFields?: boolean;
  };
  status?: {
    conditions?: {
      type: string;
      status: string;
      reason?: string;
      message?: string;
      lastTransitionTime?: string;
    }[];
    acceptedNames?: { kind: string; plural: string };
    storedVersions?: string[];
  };
}

/** The apiextensions.k8s.io/v1 CustomResourceDefinition kind (cluster-scoped). */
export const CustomResourceDefinition = defineKind<CustomResourceDefinitionObject>({
  group: "apiextensions.k8s.io",
  version: "v1",
  kind: "CustomResourceDefinition",
  plural: "customresourcedefinitions",
  namespaced: false,
});
