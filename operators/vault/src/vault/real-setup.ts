// The "real" test project's global setup: its tests need the Vault binary; without it they fail here with
// how to build it, never skip.
import { haveLocalVault, localVaultBinary } from "./local-vault.ts";

export default function setup(): void {
  if (!haveLocalVault()) {
    throw new Error(
      `${localVaultBinary()} is missing: build it with \`bash e2e/images/build-all.sh vault\` (cached by version)`,
    );
  }
}
