// The CustomResourceDefinition of one custom kind, as every Capstan operator writes it: one served and stored
// version, a status subresource, a scale subresource where the kind has a replica count, printer columns, short
// names and categories. `capstan crd` renders it to YAML in this object's key order.
import type { CustomResourceDefinitionObject, JSONSchemaProps, KindSpec } from "./kinds.ts";

/** One `additionalPrinterColumns` entry: a column of `kubectl get`. */
export type PrinterColumn = NonNullable<
  CustomResourceDefinitionObject["spec"]["versions"][number]["additionalPrinterColumns"]
>[number];

/** What {@link customResourceDefinition} needs to know about a custom kind. */
export interface CustomResourceOptions {
  /** The kind the CRD serves: its group, version, kind, plural and scope (a `defineKind` descriptor will do). */
  kind: KindSpec;
  /** Lower-case singular name, e.g. "etcdcluster". */
  singular: string;
  /** Short names for kubectl, e.g. ["etcd"]; none by default. */
  shortNames?: string[];
  /** Categories `kubectl get <category>` lists it under; default ["capstan"]. */
  categories?: string[];
  /** The OpenAPI v3 schema of the whole object (cloned, so the CRD never shares it). */
  schema: JSONSchemaProps;
  /**
   * A scale subresource (`kubectl scale`, HorizontalPodAutoscaler) over `.spec.replicas`, `.status.replicas` and
   * the label selector string in `.status.selector`; off by default.
   */
  scale?: boolean;
  /** The columns of `kubectl get`, in order; none by default. */
  printerColumns?: PrinterColumn[];
  /** Annotations of the CRD itself (e.g. capstan.dev/install-if-absent). */
  annotations?: Record<string, string>;
}

/**
 * The apiextensions.k8s.io/v1 CustomResourceDefinition of a custom kind, named `<plural>.<group>`: one version,
 * served and stored, with the status subresource, and the scale subresource, printer columns, short names and
 * annotations `options` asks for.
 *
 * @example
 * ```ts
 * export const etcdClusterCrd = () =>
 *   customResourceDefinition({
 *     kind: EtcdClusterKind,
 *     singular: "etcdcluster",
 *     shortNames: ["etcd"],
 *     schema: etcdClusterSchema,
 *     scale: true,
 *     printerColumns: [{ name: "Replicas", type: "integer", jsonPath: ".spec.replicas" }],
 *   });
 * ```
 */
export function customResourceDefinition(options: CustomResourceOptions): CustomResourceDefinitionObject {
  const { kind } = options;
  const version: CustomResourceDefinitionObject["spec"]["versions"][number] = {
    name: kind.version,
    served: true,
    storage: true,
    schema: { openAPIV3Schema: structuredClone(options.schema) },
    subresources: {
      status: {},
      ...(options.scale === true
        ? {
            scale: {
              specReplicasPath: ".spec.replicas",
              statusReplicasPath: ".status.replicas",
              labelSelectorPath: ".status.selector",
            },
          }
        : {}),
    },
    ...(options.printerColumns === undefined
      ? {}
      : { additionalPrinterColumns: structuredClone(options.printerColumns) }),
  };
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      name: `${kind.plural}.${kind.group}`,
      ...(options.annotations === undefined ? {} : { annotations: { ...options.annotations } }),
    },
    spec: {
      group: kind.group,
      scope: kind.namespaced ? "Namespaced" : "Cluster",
      names: {
        kind: kind.kind,
        plural: kind.plural,
        singular: options.singular,
        listKind: `${kind.kind}List`,
        ...(options.shortNames === undefined ? {} : { shortNames: [...options.shortNames] }),
        categories: [...(options.categories ?? ["capstan"])],
      },
      versions: [version],
    },
  };
}
