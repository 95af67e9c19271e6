// @capstan/__name__-operator as a library: the __Kind__ API, the pure builders and planner, and the controller.
export * from "./api/__kind__.ts";
export * from "./desired/config-map.ts";
export * from "./plan/plan.ts";
export * from "./reconcile/controller.ts";
