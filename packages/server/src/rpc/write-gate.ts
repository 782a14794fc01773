// What the leader asks before proposing a write (rpc.ts): the endpoint of the write's area decides
// (endpoints/writes.ts). An interface here, so rpc/ depends on no area and every area's checks stay
// with the area (issue 13: one way through — endpoint, then forward and Raft).
import type { Authorizer } from '@registry/acl';
import type { Command, Store } from '@registry/store';

export interface WriteGate {
  /**
   * Throws a RegistryError to refuse `cmd` (403 for a token that may not); returns an answer to
   * give without proposing (a lock in its lock-delay: false), or undefined to propose it.
   * `authz` is null for the agent's own internal writes, which skip the ACL check.
   */
  admit(cmd: Command, authz: Authorizer | null, store: Store, aclEnabled: boolean): unknown;
}
