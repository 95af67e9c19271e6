// What the etcd operator may do in the cluster: its controller (whose for/owns kinds give the read rules) and the
// writes its reconciler makes. `capstan rbac` prints the rules; `capstan rbac --check` (and chart.test.ts) fails
// when charts/etcd-operator/templates/rbac.yaml grants less or more.
import type { OperatorAccess } from "@capstan/cli";
import {
  NetworkPolicy,
  PersistentVolumeClaim,
  Pod,
  PodDisruptionBudget,
  Secret,
  Service,
} from "@capstan/core";
import { Registry } from "prom-client";
import { etcdClusterController } from "./controller.ts";
import { EtcdOperatorMetrics } from "./metrics.ts";

export const access: OperatorAccess = {
  controllers: () => [etcdClusterController({ metrics: new EtcdOperatorMetrics(new Registry()) })],
  rules: [
    {
      kind: Pod,
      verbs: ["create", "patch", "delete"],
      why: "a member's pod is created, patched to a new image (rolling upgrade), deleted when the member goes",
    },
    {
      kind: PersistentVolumeClaim,
      verbs: ["create", "delete"],
      why: "a member's data claim is created with it and deleted when the member goes",
    },
    { kind: Service, verbs: ["create", "patch"], why: "the peer and client Services (server-side apply)" },
    {
      kind: PodDisruptionBudget,
      verbs: ["create", "patch"],
      why: "the PodDisruptionBudget (server-side apply)",
    },
    {
      kind: Secret,
      verbs: ["get", "list", "create", "patch", "delete"],
      why: "TLS: the user's certificate Secrets are read; the CA and the certificates the operator issues are created, renewed and deleted with their member",
    },
    {
      kind: NetworkPolicy,
      verbs: ["create", "patch", "delete"],
      why: "the cluster's NetworkPolicy (server-side apply; deleted when spec.network.networkPolicy is turned off)",
    },
  ],
};
