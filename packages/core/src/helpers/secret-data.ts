// A Secret's values as text: what an operator reads out of its own and its users' Secrets (certificates, keys,
// passwords).

import type { SecretObject } from "../api/kinds.ts";

/**
 * The values of a Secret as UTF-8 text, by key: `data` decoded from base64, then `stringData` over it (a Secret
 * read from the API server has only `data`; one built but not yet written may have both). An undefined Secret gives
 * an empty record.
 */
export function secretData(secret: SecretObject | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(secret?.data ?? {})) out[k] = Buffer.from(v, "base64").toString("utf8");
  for (const [k, v] of Object.entries(secret?.stringData ?? {})) out[k] = v;
  return out;
}
