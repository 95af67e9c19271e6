// The lock a leader election contends for: the ResourceLock contract and its coordination.k8s.io/v1 Lease implementation.
import type { V1LeaseSpec } from "@kubernetes/client-node";
import { Lease, type ObjectOf } from "../api/kinds.ts";
import type { Wire } from "../api/object.ts";
import type { Client } from "../client/client.ts";
import { isNotFound } from "../client/errors.ts";

/** Who holds a lock and for how long, as client-go's LeaderElectionRecord. */
export interface LeaderElectionRecord {
  /** The holder's identity; "" when nobody holds the lock (e.g. after a release). */
  holderIdentity: string;
  leaseDurationSeconds: number;
  /** RFC 3339 with microseconds (a Kubernetes MicroTime), e.g. "2026-11-29T22:00:00.000000Z". */
  acquireTime: string;
  renewTime: string;
  leaseTransitions: number;
}

/** Storage for a {@link LeaderElectionRecord} with optimistic concurrency; a leader elector needs nothing else. */
export interface ResourceLock {
  /** The identity this process writes as holder. */
  readonly identity: string;
  /** "namespace/name", for logs and metric labels. */
  describe(): string;
  /** The current record and its version (resourceVersion); undefined when the lock does not exist. */
  get(signal?: AbortSignal): Promise<{ record: LeaderElectionRecord; version: string } | undefined>;
  /** Creates the lock; throws ApiError 409 AlreadyExists if someone else created it first. */
  create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void>;
  /** Replaces the record if `version` is still current; throws ApiError 409 Conflict when it is stale. */
  update(record: LeaderElectionRecord, version: string, signal?: AbortSignal): Promise<void>;
}

/** The spec of a coordination.k8s.io/v1 Lease as JSON (timestamps are strings). */
export type LeaseSpec = Wire<V1LeaseSpec>;

type LeaseObject = ObjectOf<typeof Lease>;

/** A time in epoch milliseconds as a Kubernetes MicroTime: "2026-11-29T22:00:00.123000Z". */
export function formatMicroTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, "000Z");
}

/** The Lease spec that stores `record` (client-go's LeaderElectionRecordToLeaseSpec). */
export function leaseSpecFromRecord(record: LeaderElectionRecord): LeaseSpec {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    ...(record.acquireTime === "" ? {} : { acquireTime: record.acquireTime }),
    ...(record.renewTime === "" ? {} : { renewTime: record.renewTime }),
    leaseTransitions: record.leaseTransitions,
  };
}

/** The record a Lease spec holds; missing fields read as ""/0 (client-go's LeaseSpecToLeaderElectionRecord). */
export function recordFromLeaseSpec(spec: LeaseSpec | undefined): LeaderElectionRecord {
  return {
    holderIdentity: spec?.holderIdentity ?? "",
    leaseDurationSeconds: spec?.leaseDurationSeconds ?? 0,
    acquireTime: spec?.acquireTime ?? "",
    renewTime: spec?.renewTime ?? "",
    leaseTransitions: spec?.leaseTransitions ?? 0,
  };
}

export interface LeaseLockOptions {
  client: Client;
  namespace: string;
  name: string;
  /** This candidate's identity; usually {@link defaultLeaderIdentity}(). */
  identity: string;
}

/**
 * A {@link ResourceLock} on a coordination.k8s.io/v1 Lease. Updates are PUTs carrying
 * metadata.resourceVersion, so a stale writer gets 409 Conflict. The Lease last read is kept so an update
 * preserves its labels, annotations and the spec fields the record does not carry (preferredHolder, strategy).
 */
export class LeaseLock implements ResourceLock {
  readonly identity: string;
  private readonly client: Client;
  private readonly namespace: string;
  private readonly name: string;
  private last: LeaseObject | undefined;

  constructor(options: LeaseLockOptions) {
    if (!options.namespace || !options.name) throw new Error("LeaseLock: namespace and name are required");
    if (!options.identity) throw new Error("LeaseLock: identity must not be empty");
    this.client = options.client;
    this.namespace = options.namespace;
    this.name = options.name;
    this.identity = options.identity;
  }

  describe(): string {
    return `${this.namespace}/${this.name}`;
  }

  async get(signal?: AbortSignal): Promise<{ record: LeaderElectionRecord; version: string } | undefined> {
    let lease: LeaseObject;
    try {
      lease = await this.client.get(Lease, this.name, this.namespace, signal);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    this.last = lease;
    return { record: recordFromLeaseSpec(lease.spec), version: lease.metadata.resourceVersion ?? "" };
  }

  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    const lease: LeaseObject = {
      metadata: { name: this.name, namespace: this.namespace },
      spec: leaseSpecFromRecord(record),
    };
    this.last = await this.client.create(Lease, lease, signal ? { signal } : {});
  }

  async update(record: LeaderElectionRecord, version: string, signal?: AbortSignal): Promise<void> {
    const base: LeaseObject =
      this.last?.metadata.resourceVersion === version
        ? this.last
        : { metadata: { name: this.name, namespace: this.namespace } };
    const lease: LeaseObject = {
      ...base,
      metadata: { ...base.metadata, resourceVersion: version },
      spec: { ...base.spec, ...leaseSpecFromRecord(record) },
    };
    this.last = await this.client.update(Lease, lease, signal ? { signal } : {});
  }
}
