// CRD schema building blocks every operator's src/api/ repeats: string maps, Kubernetes quantities, compute
// resources, pass-through core/v1 objects, status conditions (metav1.Condition) and Go durations, as
// openAPIV3Schema fragments, with the TypeScript shapes they validate. Each is a TypeBox schema (`Type.Unsafe` of
// the exact JSON a CRD needs), so an operator's `Type.Object({...})` built from them infers the field's type.
import * as Type from "typebox/type";
import type { Condition } from "../helpers/conditions.ts";

/** A Kubernetes resource quantity as the API server's own types accept it, e.g. "500m", "1Gi", 2. */
export const QUANTITY_PATTERN =
  "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";

/** A storage size: a plain non-negative quantity with an optional binary or decimal suffix, e.g. "8Gi". */
export const STORAGE_SIZE_PATTERN = "^([0-9]+(\\.[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$";

const STORAGE_UNITS: Record<string, number> = {
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** Bytes of a storage size that matches {@link STORAGE_SIZE_PATTERN} ("8Gi", "1.5Gi", "500M", "1073741824"), else undefined. */
export function storageSizeBytes(size: string): number | undefined {
  const m = new RegExp(STORAGE_SIZE_PATTERN).exec(size.trim());
  if (m === null) return undefined;
  return Math.floor(Number(m[1]) * (STORAGE_UNITS[m[3] ?? ""] ?? 1));
}

/** A Go duration as time.ParseDuration (and CEL's duration()) reads it, e.g. "2160h" or "1h30m". */
export const GO_DURATION_PATTERN = "^([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h))+$";

const GO_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Milliseconds of a Go duration such as "2160h" or "1h30m" (a value {@link GO_DURATION_PATTERN} and
 * {@link goDurationSchema} accept); throws on anything else.
 */
export function parseGoDuration(text: string): number {
  const re = /([0-9]+(?:\.[0-9]+)?)(ns|us|ms|s|m|h)/gy;
  let total = 0;
  let end = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    total += Number(m[1]) * (GO_UNITS[m[2] ?? ""] ?? 0);
    end = re.lastIndex;
  }
  if (text === "" || end !== text.length) {
    throw new Error(`"${text}" is not a Go duration such as 2160h or 1h30m`);
  }
  return total;
}

/** A quantity (int-or-string), as a field of `resources.limits` is. */
export const quantitySchema: Type.TUnsafe<string | number> = Type.Unsafe<string | number>({
  anyOf: [{ type: "integer" }, { type: "string" }],
  pattern: QUANTITY_PATTERN,
  "x-kubernetes-int-or-string": true,
});

/** A map of strings (labels, annotations, a nodeSelector). */
export function stringMapSchema(description: string): Type.TUnsafe<Record<string, string>> {
  return Type.Unsafe<Record<string, string>>({
    type: "object",
    additionalProperties: { type: "string" },
    description,
  });
}

/** Compute resources of a container: `limits` and `requests`, maps of quantities. */
export function resourcesSchema(description: string): Type.TUnsafe<ResourceQuantities> {
  return Type.Unsafe<ResourceQuantities>({
    type: "object",
    description,
    properties: {
      limits: { type: "object", additionalProperties: quantitySchema },
      requests: { type: "object", additionalProperties: quantitySchema },
    },
  });
}

/** A core/v1 object (an Affinity, a TopologySpreadConstraint...) passed through unvalidated. */
export function passThroughObjectSchema(description: string): Type.TUnsafe<Record<string, unknown>> {
  return Type.Unsafe<Record<string, unknown>>({
    type: "object",
    description,
    "x-kubernetes-preserve-unknown-fields": true,
  });
}

/** A Go duration string with a default, at most 32 characters. */
export function goDurationSchema(description: string, dflt: string): Type.TString {
  return Type.String({ description, default: dflt, maxLength: 32, pattern: GO_DURATION_PATTERN });
}

/** One metav1.Condition, with the API server's bounds. */
export const conditionSchema: Type.TUnsafe<Condition> = Type.Unsafe<Condition>({
  type: "object",
  required: ["type", "status", "reason", "message", "lastTransitionTime"],
  properties: {
    type: { type: "string", maxLength: 316 },
    status: { type: "string", enum: ["True", "False", "Unknown"] },
    reason: { type: "string", maxLength: 1024 },
    message: { type: "string", maxLength: 32768 },
    lastTransitionTime: { type: "string", format: "date-time" },
    observedGeneration: { type: "integer", format: "int64", minimum: 0 },
  },
});

/** `status.conditions`: a list of conditions keyed by type (server-side apply merges them per type). */
export function conditionsSchema(description: string): Type.TUnsafe<Condition[]> {
  return Type.Unsafe<Condition[]>({
    type: "array",
    description,
    items: conditionSchema,
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["type"],
  });
}

/** An array of core/v1 Tolerations (the fields of {@link Toleration}, with their enums). */
export function tolerationsSchema(description: string): Type.TUnsafe<Toleration[]> {
  return Type.Unsafe<Toleration[]>({
    type: "array",
    description,
    items: {
      type: "object",
      properties: {
        key: { type: "string", description: "Taint key; empty with Exists matches all." },
        operator: { type: "string", enum: ["Exists", "Equal"], description: "How key and value compare." },
        value: { type: "string", description: "Taint value to match with operator Equal." },
        effect: {
          type: "string",
          enum: ["NoSchedule", "PreferNoSchedule", "NoExecute"],
          description: "Taint effect to match; empty matches all effects.",
        },
        tolerationSeconds: {
          type: "integer",
          format: "int64",
          description: "With NoExecute: how long the pod stays bound after the taint appears.",
        },
      },
    },
  });
}

/** Where and how an operand's pods are placed and labelled: the part of a `spec.podTemplate` every operator has. */
export interface PodPlacement {
  /** Extra labels on the pods; the operator's own labels win on a clash. */
  labels?: Record<string, string>;
  /** Extra annotations on the pods. */
  annotations?: Record<string, string>;
  /** A core/v1 Affinity, passed through as is. */
  affinity?: Record<string, unknown>;
  tolerations?: Toleration[];
  nodeSelector?: Record<string, string>;
}

/**
 * The schema properties of {@link PodPlacement} for a `spec.podTemplate`, `pods` naming them in the descriptions
 * (e.g. "member pods") and `defaultAffinity` saying what the operator does without an affinity; an operator adds
 * its own (resources, priorityClassName...).
 */
export function podPlacementProperties(
  pods = "pods",
  defaultAffinity = "one pod per node, preferred",
): PodPlacementProperties {
  return {
    labels: Type.Optional(
      stringMapSchema(`Extra labels on the ${pods}; the operator's own labels win on a clash.`),
    ),
    annotations: Type.Optional(stringMapSchema(`Extra annotations on the ${pods}.`)),
    affinity: Type.Optional(
      passThroughObjectSchema(`A core/v1 Affinity for the ${pods} (default: ${defaultAffinity}).`),
    ),
    tolerations: Type.Optional(tolerationsSchema(`Tolerations of the ${pods}.`)),
    nodeSelector: Type.Optional(stringMapSchema(`Node labels the ${pods} must match.`)),
  };
}

/** The schemas {@link podPlacementProperties} returns, typed so `Type.Object({...})` infers {@link PodPlacement}. */
export interface PodPlacementProperties {
  labels: Type.TOptional<Type.TUnsafe<Record<string, string>>>;
  annotations: Type.TOptional<Type.TUnsafe<Record<string, string>>>;
  affinity: Type.TOptional<Type.TUnsafe<Record<string, unknown>>>;
  tolerations: Type.TOptional<Type.TUnsafe<Toleration[]>>;
  nodeSelector: Type.TOptional<Type.TUnsafe<Record<string, string>>>;
}

/**
 * `T` (a type derived from a CRD schema with `Type.Static`) with the fields `K` always present. A field the schema
 * gives a `default` cannot also be `required` (the API server would refuse an object without it before defaulting),
 * so `Type.Static` makes it optional; but the API server writes the default into every object, so an object read
 * from it always has the field. E.g. `type EtcdClusterSpec = Defaulted<Type.Static<typeof specSchema>, "replicas">`.
 */
export type Defaulted<T, K extends keyof T> = Flat<Omit<T, K> & { [P in K]-?: Exclude<T[P], undefined> }>;

/** One object type of an intersection, so editors show its fields rather than `Omit<...> & {...}`. */
type Flat<T> = { [P in keyof T]: T[P] };

/** Compute resources of a container as a CRD accepts them (quantities as numbers or strings). */
export interface ResourceQuantities {
  limits?: Record<string, string | number>;
  requests?: Record<string, string | number>;
}

/** A toleration, as in a Pod spec. */
export interface Toleration {
  key?: string;
  operator?: "Exists" | "Equal";
  value?: string;
  effect?: "NoSchedule" | "PreferNoSchedule" | "NoExecute";
  tolerationSeconds?: number;
}
