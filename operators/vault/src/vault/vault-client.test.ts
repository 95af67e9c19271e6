// Unit tests of the Vault client's pure parts (the client against real Vault servers: vault-client.real.test.ts).
import { describe, expect, it } from "vitest";
import { decodeRootToken } from "./vault-client.ts";

describe("decodeRootToken", () => {
  it("XORs the base64 (unpadded) encoded token with the OTP", () => {
    const token = "hvs.CAESIabcdefghijklmnopqrstuvwx";
    const otp = "0123456789abcdefghijklmnopqrstuvw";
    const encoded = Buffer.from([...Buffer.from(token)].map((b, i) => b ^ otp.charCodeAt(i)))
      .toString("base64")
      .replace(/=+$/, "");
    expect(decodeRootToken(encoded, otp)).toBe(token);
  });
  it("refuses an OTP of another length", () => {
    expect(() => decodeRootToken(Buffer.from("abc").toString("base64"), "ab")).toThrow(/OTP/);
  });
});
