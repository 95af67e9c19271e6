// spec.tls: the hand-written types name the same properties as the schema, section by section.
import { describe, expect, it } from "vitest";
import type {
  EtcdCertManagerIssuerRef,
  EtcdCertManagerTLS,
  EtcdOperatorManagedTLS,
  EtcdTLS,
  EtcdTLSEndpoint,
} from "./etcd-cluster-tls.ts";
import { tlsSchema } from "./etcd-cluster-tls.ts";

type Schema = { properties?: Record<string, Schema>; [key: string]: unknown };
const names = (s: Schema | undefined) => Object.keys(s?.properties ?? {}).sort();
const tls = tlsSchema as Schema;
const peer = tls.properties!.peer!;

const tlsKeys: Record<keyof EtcdTLS, true> = { peer: true, client: true };
const endpointKeys: Record<keyof EtcdTLSEndpoint, true> = {
  operatorManaged: true,
  secretRef: true,
  certManager: true,
};
const operatorManagedKeys: Record<keyof EtcdOperatorManagedTLS, true> = { validity: true, renewBefore: true };
const certManagerKeys: Record<keyof EtcdCertManagerTLS, true> = {
  issuerRef: true,
  duration: true,
  renewBefore: true,
};
const issuerKeys: Record<keyof EtcdCertManagerIssuerRef, true> = { name: true, kind: true, group: true };

describe("EtcdCluster spec.tls types match the schema", () => {
  it.each([
    ["tls", tlsKeys, tls],
    ["tls.peer", endpointKeys, peer],
    ["tls.client", endpointKeys, tls.properties!.client],
    ["tls.peer.operatorManaged", operatorManagedKeys, peer.properties!.operatorManaged],
    ["tls.peer.certManager", certManagerKeys, peer.properties!.certManager],
    ["tls.peer.certManager.issuerRef", issuerKeys, peer.properties!.certManager!.properties!.issuerRef],
  ] as const)("%s", (_path, keys, schema) => {
    expect(names(schema)).toEqual(Object.keys(keys).sort());
  });
});
