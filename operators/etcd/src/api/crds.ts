// The CRDs this operator owns, as `capstan crd` reads them (package.json "capstan.crds"): it writes crds/*.yaml,
// the reference in docs/operators/etcd.md and the chart's copies from this list.
import type { CustomResourceDefinitionObject } from "@capstan/core";
import { etcdBackupCrd, etcdBackupScheduleCrd } from "./backup.ts";
import { etcdClusterCrd } from "./etcd-cluster.ts";

/** Every CRD of the etcd operator. */
export const crds: CustomResourceDefinitionObject[] = [
  etcdClusterCrd(),
  etcdBackupCrd(),
  etcdBackupScheduleCrd(),
];
