// The snapshot Job: the token reaches the snapshot step alone, as a file (never an argument or a variable); only the
// CA certificate of the TLS Secret is mounted; the S3 credentials reach the upload step alone; the steps' command
// lines read back to what the builder meant; the object key is unique to the snapshot.
import { parseUploadArgs } from "@capstan/backup";
import { describe, expect, it } from "vitest";
import type { VaultSnapshot } from "../api/vault-snapshot.ts";
import { cluster } from "../reconcile/test-fixture.ts";
import { parseSaveArgs } from "./snapshot-args.ts";
import {
  SAVE_CONTAINER,
  snapshotJob,
  snapshotTokenSecret,
  TOKEN_FILE,
  UPLOAD_CONTAINER,
  VAULT_CA_FILE,
  vaultSnapshotLocation,
} from "./snapshot-job.ts";

const snapshot = (destination: VaultSnapshot["spec"]["destination"]): VaultSnapshot => ({
  apiVersion: "vault.capstan.dev/v1alpha1",
  kind: "VaultSnapshot",
  metadata: { name: "s1", namespace: "ns", uid: "u-s1" },
  spec: { clusterName: "demo", destination, activeDeadlineSeconds: 900 },
});
const s3 = snapshot({
  s3: {
    bucket: "snaps",
    prefix: "vault/prod",
    credentialsSecret: { name: "creds" },
    caSecret: { name: "minio-ca" },
  },
});

describe("snapshotJob", () => {
  const job = snapshotJob({ snapshot: s3, cluster: cluster(3), operatorImage: "op:1" });
  const spec = job.spec?.template.spec;
  const save = spec?.initContainers?.find((c) => c.name === SAVE_CONTAINER);
  const upload = spec?.containers.find((c) => c.name === UPLOAD_CONTAINER);

  it("snapshots the -active Service with the token file and the CA, then uploads to the unique key", () => {
    expect(save?.args?.[0]).toBe("vault-snapshot-save");
    expect(parseSaveArgs(save?.args?.slice(1) ?? [])).toEqual({
      address: "https://demo-active.ns.svc:8200",
      caFile: VAULT_CA_FILE,
      tokenFile: TOKEN_FILE,
      to: "/scratch/snapshot.snap",
    });
    expect(upload?.args?.[0]).toBe("backup-upload");
    expect(parseUploadArgs(upload?.args?.slice(1) ?? []).target).toMatchObject({
      kind: "s3",
      bucket: "snaps",
      key: "vault/prod/ns/demo/s1-u-s1.snap",
    });
    expect(vaultSnapshotLocation(s3)).toBe("s3://snaps/vault/prod/ns/demo/s1-u-s1.snap");
    expect(job.metadata.annotations?.["vault.capstan.dev/location"]).toBe(vaultSnapshotLocation(s3));
    expect(job.spec?.activeDeadlineSeconds).toBe(900);
    expect(job.metadata.ownerReferences?.[0]).toMatchObject({
      kind: "VaultSnapshot",
      name: "s1",
      controller: true,
    });
  });

  it("gives the token to the snapshot step only, as a mounted file; the S3 credentials to the upload only", () => {
    const mounts = (c: typeof save) => (c?.volumeMounts ?? []).map((m) => m.name);
    expect(mounts(save)).toContain("vault-token");
    expect(mounts(upload)).not.toContain("vault-token");
    expect(save?.env).toBeUndefined();
    expect(upload?.env?.map((e) => e.name)).toEqual(["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]);
    expect(mounts(upload)).toContain("s3-ca");
    const text = JSON.stringify(job);
    expect(text).not.toMatch(/hvs\./);
    const tokenVolume = spec?.volumes?.find((v) => v.name === "vault-token");
    expect(tokenVolume?.secret).toMatchObject({
      secretName: "s1-vault-token",
      items: [{ key: "token", path: "token" }],
    });
  });

  it("mounts only ca.crt of the cluster's TLS Secret, never its key", () => {
    const ca = spec?.volumes?.find((v) => v.name === "vault-ca");
    expect(ca?.secret).toMatchObject({ secretName: "demo-tls", items: [{ key: "ca.crt", path: "ca.crt" }] });
  });

  it("copies onto a claim below its directory", () => {
    const pvc = snapshotJob({
      snapshot: snapshot({ pvc: { claimName: "snaps", directory: "vault" } }),
      cluster: cluster(3),
      operatorImage: "op:1",
    });
    const up = pvc.spec?.template.spec?.containers.find((c) => c.name === UPLOAD_CONTAINER);
    expect(parseUploadArgs(up?.args?.slice(1) ?? []).target).toEqual({
      kind: "file",
      path: "/destination/vault/ns/demo/s1-u-s1.snap",
    });
    expect(pvc.spec?.template.spec?.volumes?.find((v) => v.name === "destination")).toEqual({
      name: "destination",
      persistentVolumeClaim: { claimName: "snaps" },
    });
  });

  it("refuses a cluster that is not spec.clusterName's", () => {
    const other = { ...cluster(3), metadata: { ...cluster(3).metadata, name: "other" } };
    expect(() => snapshotJob({ snapshot: s3, cluster: other, operatorImage: "op:1" })).toThrow(
      /spec.clusterName/,
    );
  });
});

describe("snapshotTokenSecret", () => {
  it("holds the token under `token`, owned by the VaultSnapshot", () => {
    const secret = snapshotTokenSecret(s3, "hvs.secret");
    expect(Buffer.from(secret.data?.token ?? "", "base64").toString()).toBe("hvs.secret");
    expect(secret.metadata.ownerReferences?.[0]).toMatchObject({ kind: "VaultSnapshot", name: "s1" });
    expect(secret.metadata.labels?.["app.kubernetes.io/managed-by"]).toBe("capstan-vault-operator");
  });
});
