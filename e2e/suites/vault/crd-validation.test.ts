// The API server rejects bad VaultCluster specs with the rule's message: even replicas, threshold > shares, version
// format, operator-owned config keys, renewBefore >= duration, storage class change, shares/threshold change,
// spec.autopilot's minQuorum and duration rules.
// Needs only the CRD (an API server, no node, no operator): every object created here is paused, so an operator
// running elsewhere takes no action on it (it would only observe it and issue its listener certificate).
import { type Client, isInvalid } from "@capstan/core";
import { applyCrd, connect, createNamespace, type TestNamespace } from "@capstan/testing";
import {
  type VaultCluster,
  VaultClusterKind,
  type VaultClusterSpec,
  vaultClusterCrd,
} from "@capstan/vault-operator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let client: Client;
let ns: TestNamespace;

function paused(name: string, spec: Record<string, unknown>): VaultCluster {
  return {
    apiVersion: VaultClusterKind.apiVersion,
    kind: VaultClusterKind.kind,
    metadata: { name, namespace: ns.name },
    spec: { paused: true, ...spec } as unknown as VaultClusterSpec,
  };
}

/** The API server's message for a write it must refuse as Invalid (422). */
async function rejection(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, "the API server accepted an invalid VaultCluster").toBeDefined();
  expect(isInvalid(err), `want 422 Invalid, got ${String(err)}`).toBe(true);
  return (err as Error).message;
}

describe.skipIf(!process.env.KUBECONFIG)("VaultCluster validation by the API server", () => {
  beforeAll(async () => {
    ({ client } = connect());
    await applyCrd(client, vaultClusterCrd(), "capstan-e2e-vault");
    ns = await createNamespace(client, "vault-crd");
  });
  afterAll(async () => {
    await ns?.cleanup();
    await client?.close();
  });

  it("fills the defaults of a minimal spec", async () => {
    const created = await client.create(VaultClusterKind, paused("defaults", {}));
    expect(created.spec).toMatchObject({
      replicas: 3,
      version: "1.14.8",
      repository: "hashicorp/vault",
      storage: { size: "1Gi" },
      tls: { duration: "2160h", renewBefore: "720h" },
      unseal: { shares: 5, threshold: 3, keepRootToken: false, retainKeysOnDelete: true },
    });
  });

  it("rejects an even number of replicas, and more than 5", async () => {
    for (const replicas of [2, 4]) {
      const message = await rejection(
        client.create(VaultClusterKind, paused(`even-${replicas}`, { replicas })),
      );
      expect(message).toMatch(/spec\.replicas/);
      expect(message).toContain("replicas must be odd (1, 3 or 5)");
    }
    expect(await rejection(client.create(VaultClusterKind, paused("seven", { replicas: 7 })))).toMatch(
      /spec\.replicas.*should be less than or equal to 5/,
    );
  });

  it("rejects an even replica count through the scale subresource too", async () => {
    await client.create(VaultClusterKind, paused("scaled", {}));
    const message = await rejection(
      client.patch(VaultClusterKind, "scaled", ns.name, { spec: { replicas: 4 } }, "merge", {
        subresource: "scale",
      }),
    );
    expect(message).toContain("replicas must be odd");
    expect((await client.get(VaultClusterKind, "scaled", ns.name)).spec.replicas).toBe(3);
  });

  it("rejects a threshold above shares, and a threshold of 1 with several shares", async () => {
    const above = await rejection(
      client.create(VaultClusterKind, paused("above", { unseal: { shares: 3, threshold: 4 } })),
    );
    expect(above).toMatch(/spec\.unseal\.threshold/);
    expect(above).toContain("threshold must not exceed shares");
    const one = await rejection(
      client.create(VaultClusterKind, paused("one", { unseal: { shares: 3, threshold: 1 } })),
    );
    expect(one).toContain("threshold must be at least 2 when there are several shares");
    const single = await client.create(
      VaultClusterKind,
      paused("single", { unseal: { shares: 1, threshold: 1 } }),
    );
    expect(single.spec.unseal).toMatchObject({ shares: 1, threshold: 1 });
  });

  it("rejects a version that is not MAJOR.MINOR.PATCH", async () => {
    for (const [name, version] of [
      ["leading-v", "v1.14.8"],
      ["two-parts", "1.14"],
      ["latest", "latest"],
    ] as const) {
      const message = await rejection(client.create(VaultClusterKind, paused(name, { version })));
      expect(message, version).toMatch(/spec\.version/);
      expect(message, version).toContain("version must be a Vault release written MAJOR.MINOR.PATCH");
    }
  });

  it("refuses the config keys the operator owns and keeps the others", async () => {
    const owned: Record<string, unknown> = {
      listener: { tcp: { address: "0.0.0.0:8300" } },
      storage: { file: { path: "/tmp" } },
      seal: { transit: {} },
      api_addr: "https://elsewhere:8200",
      disable_mlock: false,
    };
    for (const [key, value] of Object.entries(owned)) {
      const message = await rejection(
        client.create(
          VaultClusterKind,
          paused(`owned-${key.replace("_", "-")}`, { config: { ui: true, [key]: value } }),
        ),
      );
      expect(message, key).toMatch(/spec\.config/);
      expect(message, key).toContain("these keys are set by the operator and cannot be overridden");
    }
    const ok = await client.create(
      VaultClusterKind,
      paused("config-ok", {
        config: { ui: true, log_level: "debug", telemetry: { disable_hostname: true } },
      }),
    );
    expect(ok.spec.config).toEqual({ ui: true, log_level: "debug", telemetry: { disable_hostname: true } });
  });

  it("rejects renewBefore not shorter than duration, and a malformed duration", async () => {
    const longer = await rejection(
      client.create(VaultClusterKind, paused("renew", { tls: { duration: "1h", renewBefore: "2h" } })),
    );
    expect(longer).toMatch(/spec\.tls\.renewBefore/);
    expect(longer).toContain("tls.renewBefore must be shorter than tls.duration");
    const malformed = await rejection(
      client.create(VaultClusterKind, paused("days", { tls: { duration: "90d" } })),
    );
    expect(malformed).toMatch(/spec\.tls\.duration/);
  });

  it("spec.autopilot: Vault's defaults, minQuorum with cleanup (3 or more, a quorum, not above replicas), duration floors", async () => {
    const ok = await client.create(
      VaultClusterKind,
      paused("autopilot", { replicas: 5, autopilot: { cleanupDeadServers: true, minQuorum: 3 } }),
    );
    expect(ok.spec.autopilot).toMatchObject({
      cleanupDeadServers: true,
      minQuorum: 3,
      deadServerLastContactThreshold: "24h",
      serverStabilizationTime: "10s",
      lastContactThreshold: "10s",
      maxTrailingLogs: 1000,
    });
    for (const [name, replicas, autopilot] of [
      ["ap-missing", 3, { cleanupDeadServers: true }],
      ["ap-two", 3, { cleanupDeadServers: true, minQuorum: 2 }],
      ["ap-one", 1, { cleanupDeadServers: true, minQuorum: 3 }],
      ["ap-above", 3, { minQuorum: 5 }],
    ] as const) {
      const message = await rejection(client.create(VaultClusterKind, paused(name, { replicas, autopilot })));
      expect(message, name).toMatch(/spec\.autopilot\.minQuorum/);
    }
    const short = await rejection(
      client.create(
        VaultClusterKind,
        paused("ap-short", { autopilot: { deadServerLastContactThreshold: "30s" } }),
      ),
    );
    expect(short).toMatch(/spec\.autopilot\.deadServerLastContactThreshold/);
  });

  it("rejects a change of storage.storageClassName", async () => {
    await client.create(
      VaultClusterKind,
      paused("sc", { storage: { size: "1Gi", storageClassName: "standard" } }),
    );
    const message = await rejection(
      client.patch(VaultClusterKind, "sc", ns.name, { spec: { storage: { storageClassName: "fast" } } }),
    );
    expect(message).toMatch(/spec\.storage\.storageClassName/);
    expect(message).toContain("storage.storageClassName is immutable");
    expect((await client.get(VaultClusterKind, "sc", ns.name)).spec.storage.storageClassName).toBe(
      "standard",
    );
  });

  it("rejects a change of unseal.shares or unseal.threshold", async () => {
    await client.create(VaultClusterKind, paused("keys", { unseal: { shares: 5, threshold: 3 } }));
    for (const unseal of [{ shares: 7 }, { threshold: 2 }]) {
      const message = await rejection(client.patch(VaultClusterKind, "keys", ns.name, { spec: { unseal } }));
      expect(message, JSON.stringify(unseal)).toMatch(/spec\.unseal/);
      expect(message, JSON.stringify(unseal)).toContain("unseal.shares and unseal.threshold are immutable");
    }
    const ok = await client.patch(VaultClusterKind, "keys", ns.name, {
      spec: { unseal: { keepRootToken: true } },
    });
    expect(ok.spec.unseal).toMatchObject({ shares: 5, threshold: 3, keepRootToken: true });
  });
});
