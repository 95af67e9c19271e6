// Test fixture shared by core's own tests (imported by *.test.ts only): the namespaced custom kind Widget
// (test.capstan.dev/v1) that the controller, error-policy, reconcile-context, reconcileOnce and fake API server
// tests reconcile, its collection path, and a builder for one. Neither src/index.ts nor src/testing/index.ts exports
// it, so it is in neither entry of the published bundle.
import { defineKind } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";
import type { Condition } from "../helpers/conditions.ts";

/** A custom resource with a size; its status holds the fields the tests write (each test uses its own). */
export interface Widget extends KubeObject {
  spec: { size: number };
  status?: { seen?: number; size?: number; ready?: boolean; conditions?: Condition[] };
}

/** The Widget kind descriptor. */
export const Widget = defineKind<Widget>({
  group: "test.capstan.dev",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  namespaced: true,
});

/** The path of Widgets in every namespace, as the fake API server serves them. */
export const WIDGETS = "/apis/test.capstan.dev/v1/widgets";

/** A Widget `<namespace>/<name>` of the given size, without status. */
export function widget(name: string, size = 1, namespace = "ns"): Widget {
  return { apiVersion: Widget.apiVersion, kind: "Widget", metadata: { name, namespace }, spec: { size } };
}
