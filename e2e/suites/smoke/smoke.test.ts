// Smoke tests that need containers to run for real: cluster DNS (CoreDNS) and Service routing (kube-proxy) to
// a locally built image, persistent volumes (local-path-provisioner, StorageClass `standard`) surviving a pod,
// and Pod Security Admission. They run on a real node only, so the whole file is skipped unless
// CAPSTAN_REAL_NODE=1: the local cluster started with `CAPSTAN_NODE=real cluster.sh up` and `node.sh up` (which
// also installs the add-ons, addons.sh), or kind. Images are imported by the node scripts, never pulled:
// CAPSTAN_BUSYBOX_IMAGE (default capstan.local/busybox:1, e2e/images/busybox) must be on the node. Pods are
// pinned to CAPSTAN_NODE_NAME (default capstan-node-0), since the kwok fake node is schedulable too.

import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import {
  type Client,
  Deployment,
  isApiError,
  type ObjectOf,
  PersistentVolumeClaim,
  Pod,
  Service,
  StatefulSet,
} from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

type PodT = ObjectOf<typeof Pod>;
type Container = NonNullable<PodT["spec"]>["containers"][number];

const realNode = ["1", "true"].includes(process.env.CAPSTAN_REAL_NODE ?? "");
const nodeName = process.env.CAPSTAN_NODE_NAME ?? "capstan-node-0";
const image = process.env.CAPSTAN_BUSYBOX_IMAGE ?? "capstan.local/busybox:1";
const onNode = { nodeSelector: { "kubernetes.io/hostname": nodeName } };
const podTimeout = 120_000;
/** Helm: CAPSTAN_HELM (set by e2e/run.sh to the locally built one) or `helm` on PATH (kind). */
const helm = process.env.CAPSTAN_HELM ?? "helm";
const helloChart = fileURLToPath(new URL("./fixtures/hello-chart", import.meta.url));
const run = promisify(execFile);

if (!realNode) {
  console.warn(
    "suites/smoke skipped: it needs a real node with CoreDNS and local-path storage; set CAPSTAN_REAL_NODE=1 " +
      "(local cluster: CAPSTAN_NODE=real cluster.sh up && node.sh up; or kind)",
  );
}

describe.skipIf(!realNode)("smoke on a real node (CAPSTAN_REAL_NODE=1)", () => {
  let client: Client;
  const namespaces: TestNamespace[] = [];

  beforeAll(() => {
    ({ client } = connect());
  });
  afterAll(async () => {
    for (const ns of namespaces) await ns.cleanup();
    await client?.close();
  });

  async function namespace(prefix: string, labels: Record<string, string> = {}): Promise<string> {
    const ns = await createNamespace(client, prefix, labels);
    namespaces.push(ns);
    return ns.name;
  }

  function container(name: string, script: string, extra: Partial<Container> = {}): Container {
    return { name, image, imagePullPolicy: "IfNotPresent", command: ["sh", "-c", script], ...extra };
  }

  async function podLogs(ns: string, name: string): Promise<string> {
    const text = await client.raw(`/api/v1/namespaces/${ns}/pods/${name}/log`);
    return typeof text === "string" ? text : "";
  }

  /** Waits for a pod to be Ready (running) or, with `succeeded`, to have exited 0; fails early on a failed pod. */
  async function waitPod(ns: string, name: string, want: "Ready" | "Succeeded"): Promise<PodT> {
    return eventually(
      async () => {
        const pod = await client.get(Pod, name, ns);
        const phase = pod.status?.phase;
        if (phase === "Failed") {
          throw new Error(`pod ${name} failed: ${await podLogs(ns, name).catch(() => "")}`);
        }
        if (want === "Succeeded") return phase === "Succeeded" ? pod : false;
        const ready = pod.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
        return ready ? pod : false;
      },
      { timeoutMs: podTimeout, intervalMs: 500, message: `pod ${ns}/${name} is ${want}` },
    ).catch(async (err) => {
      // Name the reason (image missing, sandbox failure, …) instead of only "not met".
      const pod = await client.get(Pod, name, ns).catch(() => undefined);
      const states = JSON.stringify(pod?.status?.containerStatuses?.map((s) => s.state) ?? pod?.status);
      throw new Error(`${(err as Error).message}; status: ${states}`);
    });
  }

  it("a pod resolves a Service by its DNS name and gets an HTTP answer from a locally built image", async () => {
    const ns = await namespace("smoke-web");
    const answer = `hello from capstan smoke in ${ns}`;
    await client.create(Deployment, {
      metadata: { name: "web", namespace: ns },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: {
            ...onNode,
            terminationGracePeriodSeconds: 1,
            containers: [
              container(
                "httpd",
                `mkdir -p /tmp/www && echo "${answer}" >/tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www`,
                {
                  ports: [{ containerPort: 8080, name: "http" }],
                  readinessProbe: { httpGet: { path: "/", port: 8080 }, periodSeconds: 1 },
                },
              ),
            ],
          },
        },
      },
    });
    const svc = await client.create(Service, {
      metadata: { name: "web", namespace: ns },
      spec: { selector: { app: "web" }, ports: [{ port: 80, targetPort: 8080, name: "http" }] },
    });
    await eventually(async () => (await client.get(Deployment, "web", ns)).status?.availableReplicas === 1, {
      timeoutMs: podTimeout,
      intervalMs: 500,
      message: "Deployment web is Available",
    });

    // busybox's nslookup speaks DNS itself. Its wget (getaddrinfo, even for an address) goes through static
    // glibc's NSS, which crashes in an image without glibc's shared libraries, so the request goes out with nc
    // to the address nslookup found. Retries cover the moments until kube-proxy has programmed the Service.
    const fqdn = `web.${ns}.svc.cluster.local`;
    await client.create(Pod, {
      metadata: { name: "client", namespace: ns },
      spec: {
        ...onNode,
        restartPolicy: "Never",
        containers: [
          container(
            "client",
            [
              "set -e",
              "nslookup kubernetes.default.svc.cluster.local",
              `nslookup ${fqdn} >/tmp/lookup`,
              "cat /tmp/lookup",
              `ip="$(sed -n '/^Name:/,$ s/^Address: *//p' /tmp/lookup | head -n 1)"`,
              'echo "resolved: $ip"',
              "for i in $(seq 1 30); do",
              `  printf 'GET / HTTP/1.0\\r\\nHost: ${fqdn}\\r\\n\\r\\n' | nc -w 5 "$ip" 80 >/tmp/answer || true`,
              "  if grep -q '^HTTP/1.[01] 200' /tmp/answer; then break; fi",
              "  sleep 1",
              "done",
              'echo "answer: $(tail -n 1 /tmp/answer)"',
            ].join("\n"),
          ),
        ],
      },
    } as PodT);
    await waitPod(ns, "client", "Succeeded");
    const logs = await podLogs(ns, "client");
    expect(logs).toMatch(/Name:\s+kubernetes\.default\.svc\.cluster\.local\s+Address: 10\.96\.0\.1\b/);
    expect(logs).toContain(`resolved: ${svc.spec?.clusterIP}`);
    expect(logs).toContain(`answer: ${answer}`);
  });

  it("a StatefulSet's volume (StorageClass standard) keeps its data when the pod is replaced", async () => {
    const ns = await namespace("smoke-sts");
    await client.create(Service, {
      metadata: { name: "data", namespace: ns },
      spec: { clusterIP: "None", selector: { app: "data" } },
    });
    await client.create(StatefulSet, {
      metadata: { name: "data", namespace: ns },
      spec: {
        serviceName: "data",
        replicas: 1,
        selector: { matchLabels: { app: "data" } },
        template: {
          metadata: { labels: { app: "data" } },
          spec: {
            ...onNode,
            terminationGracePeriodSeconds: 1,
            containers: [
              container(
                "main",
                // The first pod writes its own UID; every pod prints what it finds.
                '[ -f /data/marker ] || echo "written by $POD_UID" >/data/marker; echo "found: $(cat /data/marker)"; exec sleep 3600',
                {
                  env: [{ name: "POD_UID", valueFrom: { fieldRef: { fieldPath: "metadata.uid" } } }],
                  volumeMounts: [{ name: "data", mountPath: "/data" }],
                },
              ),
            ],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: "data" },
            spec: {
              accessModes: ["ReadWriteOnce"],
              storageClassName: "standard",
              resources: { requests: { storage: "16Mi" } },
            },
          },
        ],
      },
    });
    const first = await waitPod(ns, "data-0", "Ready");
    const pvc = await client.get(PersistentVolumeClaim, "data-data-0", ns);
    expect(pvc.status?.phase).toBe("Bound");
    expect(pvc.spec?.storageClassName).toBe("standard");
    const firstUid = first.metadata.uid ?? "";
    await eventually(async () => (await podLogs(ns, "data-0")).includes(`found: written by ${firstUid}`), {
      timeoutMs: 30_000,
      message: "the first pod wrote its marker",
    });

    await client.delete(Pod, "data-0", ns);
    const second = await eventually(
      async () => {
        const pod = await client.get(Pod, "data-0", ns);
        return pod.metadata.uid !== firstUid ? pod : false;
      },
      { timeoutMs: podTimeout, intervalMs: 500, message: "the StatefulSet recreates data-0" },
    );
    await waitPod(ns, "data-0", "Ready");
    await eventually(async () => (await podLogs(ns, "data-0")).includes(`found: written by ${firstUid}`), {
      timeoutMs: 30_000,
      message: `the new pod (${second.metadata.uid}) finds the first pod's data`,
    });
  });

  it("a namespace enforcing the restricted Pod Security level admits a compliant pod and rejects another", async () => {
    const ns = await namespace("smoke-psa", { "pod-security.kubernetes.io/enforce": "restricted" });
    await client.create(Pod, {
      metadata: { name: "compliant", namespace: ns },
      spec: {
        ...onNode,
        terminationGracePeriodSeconds: 1,
        securityContext: { runAsNonRoot: true, runAsUser: 65534, seccompProfile: { type: "RuntimeDefault" } },
        containers: [
          container("main", "id -u; exec sleep 3600", {
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
          }),
        ],
      },
    } as PodT);
    await waitPod(ns, "compliant", "Ready");
    await eventually(async () => (await podLogs(ns, "compliant")).trim() === "65534", {
      timeoutMs: 30_000,
      message: "the compliant pod runs as 65534",
    });

    const rejected = await client
      .create(Pod, {
        metadata: { name: "root", namespace: ns },
        spec: { ...onNode, containers: [container("main", "exec sleep 3600")] },
      } as PodT)
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(isApiError(rejected), `expected an API error, got ${String(rejected)}`).toBe(true);
    if (!isApiError(rejected)) return;
    expect(rejected.code).toBe(403);
    expect(rejected.message).toMatch(/violates PodSecurity "restricted:latest"/);
    expect(rejected.message).toMatch(/allowPrivilegeEscalation != false/);
    expect(rejected.message).toMatch(/runAsNonRoot != true/);
  });

  it("Helm installs a chart, waits for its Deployment, and uninstalls it", async () => {
    const ns = await namespace("smoke-helm");
    const args = ["--kubeconfig", process.env.KUBECONFIG ?? "", "--namespace", ns];
    await run(helm, [
      "install",
      "hello",
      helloChart,
      ...args,
      "--wait",
      "--timeout",
      "120s",
      "--set",
      "message=hello from helm smoke",
      "--set",
      `image=${image}`,
      "--set",
      `nodeName=${nodeName}`,
    ]);
    const releases = JSON.parse((await run(helm, ["list", ...args, "-o", "json"])).stdout) as {
      name: string;
      status: string;
    }[];
    expect(releases).toEqual([expect.objectContaining({ name: "hello", status: "deployed" })]);
    const pods = await client.list(Pod, { namespace: ns, labelSelector: "app.kubernetes.io/instance=hello" });
    const pod = pods.items[0]?.metadata.name ?? "";
    await eventually(async () => expect(await podLogs(ns, pod)).toContain("hello from helm smoke"), {
      timeoutMs: podTimeout,
    });
    await run(helm, ["uninstall", "hello", ...args, "--wait"]);
    await eventually(async () => {
      const left = await client.list(Deployment, { namespace: ns });
      expect(left.items).toEqual([]);
    });
  });
});
