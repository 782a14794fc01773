// Consul's ACL commands take a unique prefix of an ID (GetTokenIDFromPartial, GetPolicyIDFromPartial)
// and the names `anonymous` / `global-management` for the built-ins.
import { CliError } from '../cli-error';
import type { Client } from '../http-client';
import type { Policy, Token } from './acl-format';

const ANONYMOUS = '00000000-0000-0000-0000-000000000002';
const GLOBAL_MANAGEMENT = '00000000-0000-0000-0000-000000000001';

function unique(ids: string[], prefix: string, what: string): string {
  const hits = ids.filter((id) => id.startsWith(prefix));
  if (hits.length === 0) throw new CliError(`No such ${what} ID with prefix: ${prefix}`);
  if (hits.length > 1) throw new CliError(`Multiple ${what} IDs found with prefix: ${prefix}`);
  return hits[0];
}

export async function tokenId(client: Client, partial: string): Promise<string> {
  if (partial === 'anonymous') return ANONYMOUS;
  if (partial.length >= 36) return partial;
  const list = await client.get<Token[]>('/v1/acl/tokens');
  return unique(list.map((t) => t.AccessorID), partial, 'token');
}

export async function policyId(client: Client, partial: string): Promise<string> {
  if (partial === 'global-management') return GLOBAL_MANAGEMENT;
  if (partial.length >= 36) return partial;
  const list = await client.get<Policy[]>('/v1/acl/policies');
  return unique(list.map((p) => p.ID), partial, 'policy');
}

export async function policyIdByName(client: Client, name: string): Promise<string> {
  const list = await client.get<Policy[]>('/v1/acl/policies');
  const hit = list.find((p) => p.Name === name);
  if (!hit) throw new CliError(`No such policy with name ${name}`);
  return hit.ID;
}
