// What the etcd operator may do in the cluster: its controller (whose for/owns kinds give the read rules) and the
// writes its reconciler makes. `capstan rbac` prints the rules; `capstan rbac --check` (and chart.test.ts) fails
// when charts/etcd-operator/templates/rbac.yaml grants less or more.
import type { OperatorAccess } from "@capstan/cli";
import { PersistentVolumeClaim, Pod, PodDisruptionBudget, Service } from "@capstan/core";
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
  ],
};
