/**
 * Objects every cluster has (created by the leader when ACLs are enabled), and
 * the secrets that name no token.
 */

export const GLOBAL_MANAGEMENT_POLICY_ID = '00000000-0000-0000-0000-000000000001';
export const GLOBAL_MANAGEMENT_POLICY_NAME = 'global-management';
export const GLOBAL_MANAGEMENT_POLICY_DESCRIPTION = 'Builtin Policy that grants unlimited access';

/**
 * Rules of the global-management policy: write on every resource, written out in
 * the block style users see when they read the policy (it starts with a newline).
 */
export const GLOBAL_MANAGEMENT_RULES = `
acl = "write"
agent_prefix "" {
\tpolicy = "write"
}
event_prefix "" {
\tpolicy = "write"
}
key_prefix "" {
\tpolicy = "write"
}
keyring = "write"
node_prefix "" {
\tpolicy = "write"
}
operator = "write"
query_prefix "" {
\tpolicy = "write"
}
service_prefix "" {
\tpolicy = "write"
\tintentions = "write"
}
session_prefix "" {
\tpolicy = "write"
}
`;

export const ANONYMOUS_TOKEN_ACCESSOR_ID = '00000000-0000-0000-0000-000000000002';
/** The secret a request without a token is resolved with. */
export const ANONYMOUS_TOKEN_SECRET = 'anonymous';
export const ANONYMOUS_TOKEN_DESCRIPTION = 'Anonymous Token';

export const BOOTSTRAP_TOKEN_DESCRIPTION = 'Bootstrap Token (Global Management)';
export const MASTER_TOKEN_DESCRIPTION = 'Master Token';

/** IDs starting with this are reserved for built-in objects; generated IDs never do. */
export const RESERVED_ID_PREFIX = '00000000-0000-0000-0000-0000000000';

/**
 * Secrets that named static authorizers in legacy ACLs. They can never be a token's
 * secret; a request using one is answered 500 `Cannot resolve root ACL` (Consul 1.4),
 * which the HTTP layer must check before resolving.
 */
const ROOT_SECRETS: ReadonlySet<string> = new Set(['allow', 'deny', 'manage']);

export function isRootSecret(secret: string): boolean {
  return ROOT_SECRETS.has(secret);
}

export const ROOT_TOKEN_ERROR = 'Cannot resolve root ACL';
