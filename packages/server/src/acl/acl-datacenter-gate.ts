// Which token writes a datacenter's leader accepts (Consul 1.4's ACL.TokenSet / tokenSetInternal):
// global tokens are written only in the primary datacenter, and Local tokens only where local tokens
// are enabled — the primary, or a secondary that replicates tokens with a replication token. The
// routes already send global-token writes to the primary (http/routes/acl.ts), so in a secondary this
// refuses what reaches its leader another way, and Local tokens where Consul disables them.
import type { Command } from '@registry/store';
import { badRequest } from '../errors';
import type { WriteGate } from '../rpc/write-gate';

export interface AclDatacenterRules {
  isPrimary: boolean;
  /** Read live: the replication token may be set at run time (PUT /v1/agent/token/replication). */
  localTokensEnabled(): boolean;
}

export const LOCAL_TOKENS_DISABLED = 'Local tokens are disabled';
export const GLOBAL_TOKENS_ELSEWHERE = 'Cannot upsert global tokens within this datacenter';

/** `inner` (the endpoints' checks) behind the datacenter rules for token writes. Internal writes pass. */
export function aclDatacenterGate(inner: WriteGate, rules: AclDatacenterRules): WriteGate {
  if (rules.isPrimary) return inner;
  return {
    admit(cmd, authz, store, aclEnabled) {
      if (authz && aclEnabled) refuseHere(cmd, rules, (accessor) => store.aclToken(accessor).value?.Local);
      return inner.admit(cmd, authz, store, aclEnabled);
    },
  };
}

function refuseHere(cmd: Command, rules: AclDatacenterRules, localOf: (accessor: string) => boolean | undefined): void {
  switch (cmd.type) {
    case 'acl.token-create':
    case 'acl.token-update':
      if (!cmd.token?.Local) throw badRequest(GLOBAL_TOKENS_ELSEWHERE);
      if (!rules.localTokensEnabled()) throw badRequest(LOCAL_TOKENS_DISABLED);
      return;
    case 'acl.token-clone': {
      const local = typeof cmd.from === 'string' ? localOf(cmd.from) : undefined;
      if (local === false) throw badRequest(GLOBAL_TOKENS_ELSEWHERE);
      if (local && !rules.localTokensEnabled()) throw badRequest(LOCAL_TOKENS_DISABLED);
      return;
    }
    default:
      return;
  }
}
