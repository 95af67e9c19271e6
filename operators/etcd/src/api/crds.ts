// The CRDs this operator owns, as `capstan crd` reads them (package.json "capstan.crds"): it writes crds/*.yaml,
// the reference in docs/operators/etcd.md and the chart's copies from this list, and the chart's own values schema.
import type { CustomResourceDefinitionObject, JSONSchemaProps } from "@capstan/core";
import { etcdBackupCrd } from "./backup.ts";
import { etcdBackupScheduleCrd } from "./backup-schedule.ts";
import { etcdClusterCrd } from "./etcd-cluster.ts";
import { etcdRestoreCrd } from "./etcd-restore.ts";

/** Every CRD of the etcd operator. */
export const crds: CustomResourceDefinitionObject[] = [
  etcdClusterCrd(),
  etcdBackupCrd(),
  etcdBackupScheduleCrd(),
  etcdRestoreCrd(),
];

/**
 * The chart's own values, beside those of every operator chart (capstan crd writes values.schema.json). Typed with
 * core's JSONSchemaProps, not @capstan/cli's ChartValuesSpec: this module is exported, and the operator's published
 * types must not need its build tools (@capstan/cli is a devDependency).
 */
export const chartValues: { properties: Record<string, JSONSchemaProps> } = {
  properties: {
    backup: {
      type: "object",
      additionalProperties: false,
      properties: {
        // An image value (registry, repository, tag, digest; or one string): capstan crd writes its schema.
        image: {
          $ref: "#/definitions/image",
          description:
            "Image whose backup-upload subcommand the backup Jobs run; empty repository: the operator's own image.",
        },
        staleAlert: {
          type: "object",
          additionalProperties: false,
          properties: {
            enabled: { type: "boolean" },
            thresholdSeconds: { type: "integer", minimum: 60 },
          },
        },
      },
    },
    recovery: {
      type: "object",
      additionalProperties: false,
      properties: {
        automaticFloorSeconds: { type: "integer", minimum: 300 },
      },
    },
  },
};
