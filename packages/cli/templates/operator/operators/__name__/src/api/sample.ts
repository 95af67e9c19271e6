// A sample __Kind__ for tests (the same as samples/__kind__.yaml).
import type { __Kind__ } from "./__kind__.ts";

export const sample: __Kind__ = {
  apiVersion: "__group__/v1alpha1",
  kind: "__Kind__",
  metadata: { name: "demo", namespace: "default", uid: "uid-demo", generation: 1 },
  spec: { data: { greeting: "hello", target: "world" } },
};
