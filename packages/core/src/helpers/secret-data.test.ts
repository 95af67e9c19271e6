// Tests of secretData: base64 data decoded as UTF-8, stringData over it, and an absent Secret.
import { describe, expect, it } from "vitest";
import type { SecretObject } from "../api/kinds.ts";
import { secretData } from "./secret-data.ts";

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

describe("secretData", () => {
  it("decodes data from base64 as UTF-8 text", () => {
    const secret: SecretObject = {
      metadata: { name: "tls" },
      data: { "tls.crt": b64("-----BEGIN CERTIFICATE-----\n"), password: b64("pässwörd") },
    };
    expect(secretData(secret)).toEqual({ "tls.crt": "-----BEGIN CERTIFICATE-----\n", password: "pässwörd" });
  });

  it("takes stringData over data, as the API server does on a write", () => {
    const secret: SecretObject = {
      metadata: { name: "s" },
      data: { a: b64("from data"), b: b64("kept") },
      stringData: { a: "from stringData" },
    };
    expect(secretData(secret)).toEqual({ a: "from stringData", b: "kept" });
  });

  it("gives an empty record for an absent Secret or one without values", () => {
    expect(secretData(undefined)).toEqual({});
    expect(secretData({ metadata: { name: "empty" } })).toEqual({});
  });
});
