// spec.network.networkPolicy on the real node, whose NetworkPolicies are enforced (the local cluster runs kube-router's
// policy controller, e2e/cluster/local/node.sh; kind's kindnet enforces them since kind v0.24), in namespaces
// enforcing Pod Security "restricted", with the operator in a namespace of its own: a cluster of 3 with the policy and
// a clientSelectors entry becomes Available (its members talk on the peer port under the policy); a probe pod with
// the allowed labels reaches the client port 2379, not the peer port 2380; a pod without them reaches neither, while
// the metrics port 2381 stays open to both; the operator still scales the cluster 3 -> 4 through the policy; turning
// the policy off deletes it and opens both ports again.
// Skipped on a local cluster started with CAPSTAN_NETWORK_POLICY=0 (no enforcer): there it could only fail.
import {
  type Client,
  isNotFound,
  NetworkPolicy,
  type ObjectOf,
  Pod,
  restrictedContainerSecurityContext,
  restrictedPodSecurityContext,
} from "@capstan/core";
import {
  connect,
  createNamespace,
  eventually,
  podReady,
  TEST_POD_RESOURCES,
  type TestNamespace,
} from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  etcdCluster,
  memberPods,
  printFailureReport,
  tearDownSuite,
  waitAvailable,
} from "./fixtures/etcd-cluster.ts";
import { EtcdClusterKind } from "./fixtures/operator-api.ts";
import {
  etcdSuitesEnabled,
  installOperator,
  nodeName,
  type OperatorRelease,
} from "./fixtures/operator-release.ts";

const name = "np";
const restricted = { "pod-security.kubernetes.io/enforce": "restricted" };
const minutes = (n: number) => n * 60_000;
/** The busybox image on the local node (e2e/images/busybox). */
const busybox = process.env.CAPSTAN_BUSYBOX_IMAGE ?? "capstan.local/busybox:1";
/** The labels spec.network.clientSelectors allows to the client port. */
const CLIENT_LABELS = { "app.kubernetes.io/name": "etcd-client" };
const PORTS = { client: 2379, peer: 2380, metrics: 2381 } as const;

const enforcerOff = process.env.CAPSTAN_NETWORK_POLICY === "0";
if (etcdSuitesEnabled && enforcerOff) {
  console.log(
    "network-policy.test.ts skipped: CAPSTAN_NETWORK_POLICY=0, so the local cluster enforces no NetworkPolicy",
  );
}

let client: Client;
let opNs: TestNamespace;
let clusterNs: TestNamespace;
let op: OperatorRelease | undefined;
let ns = "";

/**
 * A pod that tries a TCP connection to each "ip:port" of `targets` over and over (busybox nc, 2 s connect timeout)
 * and prints one line per target and round, "<round> <ip:port> open|closed", then "<round> end".
 */
async function startProbe(podName: string, labels: Record<string, string>, targets: string[]) {
  const script = [
    "i=0",
    "while true; do",
    "  i=$((i+1))",
    "  for t in $TARGETS; do",
    '    set -- $(echo "$t" | tr : " ")',
    '    if nc -w 2 "$1" "$2" </dev/null >/dev/null 2>&1; then s=open; else s=closed; fi',
    '    echo "$i $t $s"',
    "  done",
    '  echo "$i end"',
    "  sleep 1",
    "done",
  ].join("\n");
  await client.create(Pod, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: podName, namespace: ns, labels },
    spec: {
      nodeSelector: { "kubernetes.io/hostname": nodeName },
      terminationGracePeriodSeconds: 1,
      securityContext: restrictedPodSecurityContext(65534),
      containers: [
        {
          name: "probe",
          image: busybox,
          imagePullPolicy: "IfNotPresent",
          command: ["sh", "-c", script],
          env: [{ name: "TARGETS", value: targets.join(" ") }],
          resources: TEST_POD_RESOURCES,
          securityContext: restrictedContainerSecurityContext(),
        },
      ],
    },
  } as ObjectOf<typeof Pod>);
}

/** The probe's last complete round: "ip:port" -> open or closed. */
async function lastRound(podName: string): Promise<Map<string, string>> {
  const log = await client.raw(`/api/v1/namespaces/${ns}/pods/${podName}/log?tailLines=60`);
  const lines = (typeof log === "string" ? log : "").trim().split("\n");
  const end = [...lines].reverse().find((l) => l.endsWith(" end"));
  if (end === undefined) throw new Error(`probe ${podName} has not finished a round yet`);
  const round = end.split(" ")[0];
  const states = new Map<string, string>();
  for (const l of lines) {
    const [r, target, state] = l.split(" ");
    if (r === round && target !== undefined && state !== undefined && target !== "end")
      states.set(target, state);
  }
  return states;
}

/**
 * Waits until the probe's latest round sees, for every member IP, each port of `want` in the given state; throws
 * with the last round seen. The enforcer applies a policy change within seconds, so "until" is the normal case.
 */
function waitProbeSees(podName: string, ips: string[], want: Partial<Record<keyof typeof PORTS, string>>) {
  const expected = ips.flatMap((ip) =>
    Object.entries(want).map(([port, state]) => [`${ip}:${PORTS[port as keyof typeof PORTS]}`, state]),
  );
  return eventually(
    async () => {
      const seen = await lastRound(podName);
      const wrong = expected.filter(([target, state]) => seen.get(target ?? "") !== state);
      if (wrong.length > 0)
        throw new Error(
          `want ${wrong.map(([t, s]) => `${t} ${s}`).join(", ")}; last round: ${[...seen].map(([t, s]) => `${t} ${s}`).join(", ")}`,
        );
    },
    { timeoutMs: minutes(2), intervalMs: 2_000, message: `probe ${podName} sees ${JSON.stringify(want)}` },
  );
}

describe.skipIf(!etcdSuitesEnabled || enforcerOff)("EtcdCluster with spec.network.networkPolicy", () => {
  beforeAll(async () => {
    ({ client } = connect());
    opNs = await createNamespace(client, "etcd-np-op", restricted);
    clusterNs = await createNamespace(client, "etcd-np", restricted);
    ns = clusterNs.name;
    op = await installOperator(client, opNs.name, { watchNamespace: ns });
    await client.create(
      EtcdClusterKind,
      etcdCluster(ns, name, {
        network: { networkPolicy: true, clientSelectors: [{ podSelector: { matchLabels: CLIENT_LABELS } }] },
      }),
    );
  }, minutes(5));

  afterAll(() => tearDownSuite(client, { namespace: ns, name }, op, [clusterNs, opNs]), minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(async () => {
      await printFailureReport(client, ns, name, op);
      for (const p of ["allowed", "denied"]) {
        const log = await client
          .raw(`/api/v1/namespaces/${ns}/pods/${p}/log?tailLines=20`)
          .catch((err: unknown) => `(no log: ${String(err)})`);
        console.log(`--- probe ${p}:\n${typeof log === "string" ? log : JSON.stringify(log)}`);
      }
    });
  });

  it(
    "lets only members reach the peer port and only allowed pods the client port, until it is turned off",
    async () => {
      // Available under the policy: the members formed the cluster over the peer port, the operator reached them.
      await waitAvailable(client, ns, name, 3, minutes(4));
      const policy = await client.get(NetworkPolicy, `${name}-etcd`, ns);
      expect(policy.spec?.policyTypes).toEqual(["Ingress"]);
      const ips = (await memberPods(client, ns, name)).map((p) => p.status?.podIP ?? "");
      expect(ips.every((ip) => ip !== "")).toBe(true);
      const targets = ips.flatMap((ip) => Object.values(PORTS).map((port) => `${ip}:${port}`));

      await startProbe("allowed", CLIENT_LABELS, targets);
      await startProbe("denied", { "app.kubernetes.io/name": "not-a-client" }, targets);
      await eventually(
        async () => {
          for (const p of ["allowed", "denied"]) {
            if (!podReady(await client.get(Pod, p, ns))) throw new Error(`probe ${p} is not ready`);
          }
        },
        { timeoutMs: minutes(2), message: "both probe pods run" },
      );
      await waitProbeSees("denied", ips, { client: "closed", peer: "closed", metrics: "open" });
      await waitProbeSees("allowed", ips, { client: "open", peer: "closed", metrics: "open" });

      // The operator reconciles through the policy: a new member joins (peer port) and is listed (client port).
      await client.patch(EtcdClusterKind, name, ns, { spec: { replicas: 4 } });
      await waitAvailable(client, ns, name, 4, minutes(4));
      await waitProbeSees("denied", ips, { client: "closed", peer: "closed" });

      // Off: the policy is deleted and the denied pod reaches both ports again.
      await client.patch(EtcdClusterKind, name, ns, { spec: { network: { networkPolicy: false } } });
      await eventually(
        () =>
          client.get(NetworkPolicy, `${name}-etcd`, ns).then(
            () => {
              throw new Error("the NetworkPolicy is still there");
            },
            (err: unknown) => {
              if (!isNotFound(err)) throw err;
            },
          ),
        { timeoutMs: minutes(2), message: `NetworkPolicy ${name}-etcd is deleted` },
      );
      await waitProbeSees("denied", ips, { client: "open", peer: "open", metrics: "open" });
    },
    minutes(15),
  );
});
