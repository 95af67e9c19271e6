// What the __name__ operator may do in the cluster: its controller (whose for/owns kinds give the read rules) and the
// writes its reconciler makes, each with why. `capstan rbac` prints the rules; `capstan rbac --check` (and rbac.test.ts)
// fails when charts/__name__-operator/templates/rbac.yaml grants less or more. Declare each kind you write here.
import type { OperatorAccess } from "@capstan/cli";
import { ConfigMap } from "@capstan/core";
import { __kind__Controller } from "./controller.ts";

export const access: OperatorAccess = {
  controllers: () => [__kind__Controller()],
  rules: [
    { kind: ConfigMap, verbs: ["create", "patch"], why: "each __Kind__'s ConfigMap (server-side apply)" },
  ],
};
