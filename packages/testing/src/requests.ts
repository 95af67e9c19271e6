// Resource requests for the pods the integration suites create. The local test node has the CI machine's 2 cores,
// and the full run drives four lanes of suites at once (etcd twice, Vault, Prometheus): with the operators' and
// operands' defaults (100m each) their requests passed the node's 2000m and pods stayed Pending ("Insufficient
// cpu") while the node itself was mostly idle. The suites ask for little instead, so scheduling reflects what a
// test does, not how many lanes share the machine; the defaults themselves are checked by the unit tests.

/** Requests of an operand pod (etcd member, Vault server, Prometheus server) in a suite. */
export const TEST_POD_RESOURCES = { requests: { cpu: "10m", memory: "64Mi" } } as const;

/** Helm values giving an operator chart's pod the same small requests (every Capstan chart has `resources`). */
export const TEST_CHART_RESOURCES = {
  "resources.requests.cpu": "10m",
  "resources.requests.memory": "64Mi",
} as const;
