// spec.tls: the types derived from the schema are what the code reads, section by section.
import { describe, expect, expectTypeOf, it } from "vitest";
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
const tls = tlsSchema as unknown as Schema;
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

describe("spec.tls types derived from the schema", () => {
  it("types the sources the code reads", () => {
    expectTypeOf<EtcdTLS["peer"]>().toEqualTypeOf<EtcdTLSEndpoint | undefined>();
    expectTypeOf<EtcdTLSEndpoint["secretRef"]>().toEqualTypeOf<{ name: string } | undefined>();
    expectTypeOf<EtcdTLSEndpoint["certManager"]>().toEqualTypeOf<EtcdCertManagerTLS | undefined>();
    expectTypeOf<EtcdCertManagerTLS["issuerRef"]>().toEqualTypeOf<EtcdCertManagerIssuerRef>();
    expectTypeOf<EtcdCertManagerIssuerRef["kind"]>().toEqualTypeOf<"Issuer" | "ClusterIssuer" | undefined>();
    expectTypeOf<EtcdOperatorManagedTLS["validity"]>().toEqualTypeOf<string | undefined>();
  });
  it("refuses a field the schema lacks", () => {
    // @ts-expect-error the CRD has no tls.peer.acme
    const endpoint: EtcdTLSEndpoint = { acme: {} };
    expect(endpoint).toBeDefined();
  });
});
