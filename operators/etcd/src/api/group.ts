// The API group and version of every etcd operator resource, in a module of its own so the kinds' files can
// import it without importing each other.

/** The API group of every etcd operator resource. */
export const GROUP = "etcd.capstan.dev";
/** The served and stored version. */
export const VERSION = "v1alpha1";
