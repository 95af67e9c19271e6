// TLS and NetworkPolicy builders: golden files for a member pod with TLS (operator-managed, and the user's Secret),
// a backup Job with the client certificate and the NetworkPolicy; tables for the flags, names and sources.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { EtcdBackup } from "../api/backup.ts";
import type { EtcdCluster, EtcdClusterSpec } from "../api/etcd-cluster.ts";
import { backupJob } from "./backup-job.ts";
import { memberPod } from "./member-pod.ts";
import { clientEndpoint, clientURL, memberNameFromPeerURL, peerURL } from "./names.ts";
import { networkPolicy } from "./network-policy.ts";
import {
  backupClientSecret,
  clientTLS,
  memberHosts,
  memberSecretFor,
  operatorClientSecret,
  peerTLS,
  tlsArgs,
} from "./tls.ts";

const UPDATE = process.env.UPDATE_GOLDEN === "1";
const TESTDATA = new URL("../../testdata/", import.meta.url);

afterAll(() => {
  if (UPDATE)
    execFileSync("npx", ["biome", "format", "--write", fileURLToPath(TESTDATA)], { stdio: "inherit" });
});

/** Compares `actual` with testdata/<name>.json; with UPDATE_GOLDEN=1 writes it instead. */
function golden(name: string, actual: unknown): void {
  const url = new URL(`${name}.json`, TESTDATA);
  const text = `${JSON.stringify(actual, null, 2)}\n`;
  if (UPDATE) writeFileSync(url, text);
  expect(existsSync(url), `testdata/${name}.json is missing: run UPDATE_GOLDEN=1 npm test`).toBe(true);
  expect(JSON.parse(readFileSync(url, "utf8"))).toEqual(JSON.parse(text));
}

const cluster = (spec: Partial<EtcdClusterSpec> = {}): EtcdCluster => ({
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdCluster",
  metadata: { name: "demo", namespace: "db", uid: "6f1c0f5e-0000-4000-8000-000000000001" },
  spec: {
    replicas: 3,
    version: "3.6.15",
    repository: "gcr.io/etcd-development/etcd",
    storage: { size: "2Gi" },
    ...spec,
  },
});

const managed = cluster({ tls: { peer: { operatorManaged: {} }, client: {} } });
const userClient = cluster({
  tls: {
    peer: { operatorManaged: { validity: "10m", renewBefore: "8m" } },
    client: { secretRef: { name: "my-etcd-tls" } },
  },
});
const seedInput = (c: EtcdCluster) => {
  const member = "demo-a1b2c";
  return {
    cluster: c,
    member,
    initialCluster: [{ name: member, peerURL: peerURL(c, member) }],
    initialClusterState: "new" as const,
  };
};
const backup: EtcdBackup = {
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdBackup",
  metadata: { name: "nightly-29891580", namespace: "db", uid: "6f1c0f5e-0000-4000-8000-0000000000b1" },
  spec: { clusterName: "demo", destination: { pvc: { claimName: "backups" } } },
};
const operator = { namespace: "etcd-system", labels: { "app.kubernetes.io/name": "etcd-operator" } };

describe("golden files", () => {
  it.each([
    ["pod-tls-operator-managed", () => memberPod(seedInput(managed))],
    ["pod-tls-client-secret-ref", () => memberPod(seedInput(userClient))],
    [
      "job-backup-tls",
      () =>
        backupJob({
          backup,
          cluster: managed,
          member: "demo-a1b2c",
          operatorImage: "ghcr.io/capstan-dev/capstan/etcd-operator:0.1.0",
        }),
    ],
    [
      "network-policy",
      () =>
        networkPolicy(
          cluster({
            network: {
              networkPolicy: true,
              clientSelectors: [
                { podSelector: { matchLabels: { app: "api" } } },
                { namespaceSelector: { matchLabels: { team: "storage" } } },
                {
                  podSelector: { matchExpressions: [{ key: "tier", operator: "In", values: ["web"] }] },
                  namespaceSelector: { matchLabels: { env: "prod" } },
                },
              ],
            },
          }),
          operator,
        ),
    ],
    ["network-policy-minimal", () => networkPolicy(cluster({ network: { networkPolicy: true } }))],
  ] as const)("%s", (name, build) => golden(name, build()));
});

describe("TLS sources, flags and names", () => {
  it("without spec.tls: plain HTTP, no flags, no Secrets", () => {
    const c = cluster();
    expect([peerTLS(c), clientTLS(c), operatorClientSecret(c), backupClientSecret(c)]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(tlsArgs(c)).toEqual([]);
    expect(peerURL(c, "demo-a1b2c")).toMatch(/^http:\/\//);
    expect(clientEndpoint(c)).toBe("http://demo-client.db.svc:2379");
  });

  it("an empty endpoint means operator-managed with the default lifetimes", () => {
    expect(clientTLS(managed)).toEqual({
      kind: "operatorManaged",
      validityMs: 2160 * 3_600_000,
      renewBeforeMs: 720 * 3_600_000,
    });
    expect(peerTLS(userClient)).toEqual({
      kind: "operatorManaged",
      validityMs: 600_000,
      renewBeforeMs: 480_000,
    });
    expect(clientTLS(userClient)).toEqual({ kind: "secretRef", secretName: "my-etcd-tls" });
  });

  it("the operator and backup Jobs use their own Secrets, or the user's", () => {
    expect([operatorClientSecret(managed), backupClientSecret(managed)]).toEqual([
      "demo-operator-client-tls",
      "demo-backup-client-tls",
    ]);
    expect([operatorClientSecret(userClient), backupClientSecret(userClient)]).toEqual([
      "my-etcd-tls",
      "my-etcd-tls",
    ]);
  });

  it.each([
    [
      "peer only",
      cluster({ tls: { peer: {} } }),
      ["--peer-client-cert-auth=true", "--peer-cert-allowed-cn=demo-member"],
      ["--client-cert-auth=true"],
    ],
    [
      "client only",
      cluster({ tls: { client: {} } }),
      ["--client-cert-auth=true", "--trusted-ca-file=/etc/etcd/tls/client/ca.crt"],
      ["--peer-client-cert-auth=true"],
    ],
    [
      "peer from cert-manager: the member CN the operator asks for",
      cluster({ tls: { peer: { certManager: { issuerRef: { name: "ca" } } } } }),
      ["--peer-client-cert-auth=true", "--peer-cert-allowed-cn=demo-member"],
      ["--client-cert-auth=true"],
    ],
    [
      "peer from the user's Secret: no CN restriction",
      cluster({ tls: { peer: { secretRef: { name: "x" } } } }),
      ["--peer-client-cert-auth=true"],
      ["--peer-cert-allowed-cn=demo-member"],
    ],
  ] as const)("flags: %s", (_name, c, has, hasNot) => {
    const args = tlsArgs(c);
    for (const a of has) expect(args).toContain(a);
    for (const a of hasNot) expect(args).not.toContain(a);
  });

  it("cert-manager: the issuer's defaults filled; the operator's and backup Jobs' Secrets as when operator-managed", () => {
    const cm = cluster({
      tls: {
        peer: { certManager: { issuerRef: { name: "ca" } } },
        client: { certManager: { issuerRef: { name: "ca", kind: "ClusterIssuer" }, duration: "24h" } },
      },
    });
    expect(peerTLS(cm)).toEqual({
      kind: "certManager",
      issuerRef: { name: "ca", kind: "Issuer", group: "cert-manager.io" },
    });
    expect(clientTLS(cm)).toMatchObject({ issuerRef: { kind: "ClusterIssuer" }, duration: "24h" });
    expect([operatorClientSecret(cm), backupClientSecret(cm)]).toEqual([
      "demo-operator-client-tls",
      "demo-backup-client-tls",
    ]);
  });

  it.each([
    ["both operator-managed", { peer: {}, client: {} }, ["demo-a-tls", "demo-a-tls"]],
    [
      "peer user's, client operator-managed",
      { peer: { secretRef: { name: "x" } }, client: {} },
      ["x", "demo-a-tls"],
    ],
    [
      "both from one cert-manager issuer",
      {
        peer: { certManager: { issuerRef: { name: "ca" } } },
        client: { certManager: { issuerRef: { name: "ca" } } },
      },
      ["demo-a-tls", "demo-a-tls"],
    ],
    [
      "two cert-manager issuers",
      {
        peer: { certManager: { issuerRef: { name: "ca" } } },
        client: { certManager: { issuerRef: { name: "ca", kind: "ClusterIssuer" as const } } },
      },
      ["demo-a-tls", "demo-a-client-tls"],
    ],
    [
      "client from cert-manager, peer user's",
      { peer: { secretRef: { name: "x" } }, client: { certManager: { issuerRef: { name: "ca" } } } },
      ["x", "demo-a-tls"],
    ],
  ] as const)("a member mounts (peer, client): %s", (_name, tls, want) => {
    const c = cluster({ tls });
    expect([memberSecretFor(c, "peer", "demo-a"), memberSecretFor(c, "client", "demo-a")]).toEqual(want);
  });

  it("URLs are https where TLS is on, and the member name is still read from a peer URL", () => {
    expect(peerURL(managed, "demo-a1b2c")).toBe("https://demo-a1b2c.demo-peer.db.svc:2380");
    expect(clientURL(managed, "demo-a1b2c")).toBe("https://demo-a1b2c.demo-peer.db.svc:2379");
    expect(clientEndpoint(managed)).toBe("https://demo-client.db.svc:2379");
    expect(memberNameFromPeerURL(peerURL(managed, "demo-a1b2c"))).toBe("demo-a1b2c");
  });

  it("a member certificate names its peer name, the client Service and localhost", () => {
    expect(memberHosts(managed, "demo-a1b2c")).toEqual([
      "demo-a1b2c.demo-peer.db.svc",
      "demo-a1b2c.demo-peer.db.svc.cluster.local",
      "demo-client",
      "demo-client.db",
      "demo-client.db.svc",
      "demo-client.db.svc.cluster.local",
      "localhost",
      "127.0.0.1",
      "::1",
    ]);
  });

  it("with client TLS the probes use the plain metrics port; without, the client port", () => {
    const port = (c: EtcdCluster) =>
      memberPod(seedInput(c)).spec?.containers[0]?.readinessProbe?.httpGet?.port;
    expect(port(managed)).toBe("metrics");
    expect(port(cluster({ tls: { peer: {} } }))).toBe("client");
  });
});
