// Majorities of a raft cluster (etcd, Vault's integrated storage): how many voters must agree.

/**
 * The votes a quorum needs among `voters` voting members: a strict majority, `floor(voters / 2) + 1` (1 of 1, 2 of
 * 3, 3 of 4 or 5). A cluster keeps serving writes while at least this many voters are healthy; learners and
 * non-voters do not count.
 */
export function quorum(voters: number): number {
  return Math.floor(voters / 2) + 1;
}
