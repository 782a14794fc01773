// Consul 1.4 still reads the pre-1.4 top-level token keys: `acl_token` (default), `acl_agent_token`,
// `acl_agent_master_token` and `acl_replication_token`. As in Consul's config builder, a token named
// under `acl.tokens` in the same file wins over its legacy key.
/** The token fields of AclConfig (config.ts) these keys set. */
interface TokenFields {
  default?: string;
  agent?: string;
  agentMaster?: string;
  replication?: string;
}

const LEGACY: [string, keyof TokenFields, string][] = [
  ['acl_token', 'default', 'default'],
  ['acl_agent_token', 'agent', 'agent'],
  ['acl_agent_master_token', 'agentMaster', 'agent_master'],
  ['acl_replication_token', 'replication', 'replication'],
];

export function applyLegacyAclTokens(tokens: TokenFields, file: Record<string, unknown>, source: string): void {
  const modern = (file.acl as { tokens?: Record<string, unknown> } | undefined)?.tokens ?? {};
  for (const [key, field, modernKey] of LEGACY) {
    const v = file[key];
    if (v === undefined || modern[modernKey] !== undefined) continue;
    if (typeof v !== 'string') throw new Error(`${source}: ${key} must be a string`);
    tokens[field] = v;
  }
}
