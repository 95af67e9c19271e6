// The API group and version of every Vault operator resource.

/** The API group of every Vault operator resource. */
export const GROUP = "vault.capstan.dev";
/** The served and stored version. */
export const VERSION = "v1alpha1";
