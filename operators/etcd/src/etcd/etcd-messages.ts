// What etcd's v3 JSON gateway answers, as typed values: headers, members, status, health, hashes and alarms, and
// the readers that turn the gateway's JSON (uint64 as decimal strings, enums as names or numbers) into them.

/** Response header every etcd call returns. Member and cluster IDs are decimal strings (uint64). */
export interface EtcdHeader {
  clusterId: string;
  memberId: string;
  revision: number;
  raftTerm: number;
}

/** One member of etcd's member list. IDs are decimal strings, as the JSON gateway returns uint64. */
export interface EtcdMember {
  id: string;
  /** "" until the member has started once. */
  name: string;
  peerURLs: string[];
  /** Empty until the member has started once. */
  clientURLs: string[];
  isLearner: boolean;
}

/** The member list and the header of the member that answered. */
export interface EtcdMemberList {
  header: EtcdHeader;
  members: EtcdMember[];
}

/** Status of one member, from its own endpoint. */
export interface EtcdStatus {
  /** The endpoint asked. */
  endpoint: string;
  header: EtcdHeader;
  /** The answering member's ID (header.memberId). */
  memberId: string;
  /** The leader's member ID as this member sees it ("0" when it knows no leader). */
  leader: string;
  version: string;
  dbSize: number;
  dbSizeInUse: number;
  raftIndex: number;
  raftTerm: number;
  raftAppliedIndex: number;
  isLearner: boolean;
  /** Alarms and errors the member reports (e.g. "NOSPACE"). */
  errors: string[];
}

/** Health of one member, from GET /readyz. */
export interface EtcdHealth {
  endpoint: string;
  healthy: boolean;
  /** Why the member is not healthy (the response text or the connection error). */
  reason?: string;
}

/** A hash of a member's key-value store at a revision, to compare members. */
export interface EtcdHashKV {
  endpoint: string;
  memberId: string;
  hash: number;
  /** The revision the hash was computed at. */
  hashRevision: number;
  /** The member's compacted revision (-1 if never compacted). */
  compactRevision: number;
}

/** An alarm raised by a member (etcd's Maintenance.Alarm). */
export interface EtcdAlarm {
  /** Decimal ID of the member that raised it. */
  memberId: string;
  /** "NOSPACE" (the database reached its quota) or "CORRUPT" (a member's data differs from the others'). */
  alarm: string;
}

/** etcd's AlarmType enum, for a gateway that answers numbers. */
export const ALARM_TYPES = ["NONE", "NOSPACE", "CORRUPT"];

/** A JSON object as the gateway sends it. */
export type Json = Record<string, unknown>;

/** Converts a decimal member ID (as etcd's JSON gateway returns it) to the hexadecimal form etcdctl prints. */
export function memberIdToHex(id: string): string {
  return BigInt(id).toString(16);
}

/** The gateway answers JSON; anything else (e.g. a proxy's error page) becomes `{ message: text }`. */
export function parseJson(text: string): Json {
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v === "object" && v !== null) return v as Json;
  } catch {
    // not JSON: fall through
  }
  return { message: text.trim() };
}

export function b64(s: string): string {
  return Buffer.from(s, "utf8").toString("base64");
}

export function str(v: unknown, fallback: string): string {
  return typeof v === "string" ? v : fallback;
}

export function numOrUndefined(v: unknown): number | undefined {
  return typeof v === "number" ? v : undefined;
}

/** Reads a number the gateway sends as a JSON number or (int64/uint64) a decimal string; absent -> fallback. */
export function num(v: unknown, fallback = 0): number {
  if (typeof v === "number") return v;
  if (typeof v === "string" && v !== "") return Number(v);
  return fallback;
}

export function parseHeader(v: unknown): EtcdHeader {
  const h = (v ?? {}) as Json;
  return {
    clusterId: str(h.cluster_id, "0"),
    memberId: str(h.member_id, "0"),
    revision: num(h.revision),
    raftTerm: num(h.raft_term),
  };
}

export function parseAlarms(v: unknown): EtcdAlarm[] {
  if (!Array.isArray(v)) return [];
  return v
    .filter((a): a is Json => typeof a === "object" && a !== null)
    .map((a) => ({
      memberId: typeof a.memberID === "number" ? String(a.memberID) : str(a.memberID, "0"),
      alarm: typeof a.alarm === "number" ? (ALARM_TYPES[a.alarm] ?? String(a.alarm)) : str(a.alarm, "NONE"),
    }))
    .filter((a) => a.alarm !== "NONE");
}

export function parseMembers(v: unknown): EtcdMember[] {
  if (!Array.isArray(v)) return [];
  return v
    .filter((m): m is Json => typeof m === "object" && m !== null)
    .map((m) => ({
      id: str(m.ID, "0"),
      name: str(m.name, ""),
      peerURLs: Array.isArray(m.peerURLs) ? m.peerURLs.map(String) : [],
      clientURLs: Array.isArray(m.clientURLs) ? m.clientURLs.map(String) : [],
      isLearner: m.isLearner === true,
    }));
}
