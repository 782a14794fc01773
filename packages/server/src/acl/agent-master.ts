// The agent master token (`acl.tokens.agent_master`, legacy `acl_agent_master_token`, or set through
// PUT /v1/agent/token/agent_master): Consul's agent resolves it locally, without the servers, to a
// fixed policy — agent:write on this agent's own node and node:read on every node, nothing else — so
// an operator can still reach the agent endpoints when the ACL system is unreachable or not yet set
// up. The token is read at every request: a new one set at run time takes effect at once.
import { timingSafeEqual } from 'node:crypto';
import { Authorizer, parseRules } from '@registry/acl';
import type { AclResolver } from '../rpc/acl-resolver';

export function agentMasterAuthorizer(nodeName: string): Authorizer {
  const rules = parseRules(`agent ${JSON.stringify(nodeName)} { policy = "write" }\nnode_prefix "" { policy = "read" }`);
  return new Authorizer([rules], 'deny');
}

/** Compared in constant time, as Consul compares the agent master token. */
function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** `inner`, except that the agent master token resolves to agentMasterAuthorizer on this agent. */
export function withAgentMaster(inner: AclResolver, nodeName: string, agentMaster: () => string | undefined): AclResolver {
  const master = agentMasterAuthorizer(nodeName);
  const isMaster = (secret: string | undefined) => {
    const token = agentMaster();
    return inner.enabled && !!token && secret !== undefined && sameSecret(secret, token);
  };
  const resolver: AclResolver = {
    get enabled() {
      return inner.enabled;
    },
    resolve: (secret) => (isMaster(secret) ? master : inner.resolve(secret)),
  };
  // A client agent's resolver asks the servers; the agent master token is never sent to them.
  const prepare = inner.prepare?.bind(inner);
  if (prepare) resolver.prepare = (secret, stale) => (isMaster(secret) ? undefined : prepare(secret, stale));
  const prepareForwarded = inner.prepareForwarded?.bind(inner);
  if (prepareForwarded) resolver.prepareForwarded = (secret) => (isMaster(secret) ? undefined : prepareForwarded(secret));
  return resolver;
}
