// How a client agent asks the servers what a token grants (acl/cached-resolver.ts): the read
// `acl.token-resolve` with the token itself as the request's token, `stale` as Consul's client
// asks (AllowStale: any server answers from its own replicated tables, no leader needed). Its own
// short budget, shorter than an ordinary forwarded read's: while no server answers, the down policy
// should answer the request soon rather than after the usual 15 s.
//
// Unlike Consul's client, a token the server does not know is asked about once more in default
// mode: that server first learns the leader's commit index and applies up to it. A token made a
// moment ago on the leader — the usual "create a token, then use it" of a deploy script — is then
// found even when the client's server has not applied it yet, instead of being refused and the
// refusal cached for acl.token_ttl. Only unknown tokens pay the extra round, and when it cannot
// be had (no leader) the server's own answer stands.
import { fromEnvelope } from '../rpc/envelope';
import { defaultQueryOptions, type Consistency } from '../rpc/query-options';
import type { ClientRead } from '../cluster/client-facts';
import { isAclNotFound } from '../acl/store-resolver';
import type { TokenGrant } from '../acl/token-grant';
import type { ServerLink } from './server-link';

const ATTEMPT_MS = 2_000;
const BUDGET_MS = 5_000;

/**
 * `primary`: the ACL primary datacenter (`primary_datacenter`). In a secondary, a token its servers do
 * not hold (a global token there only through the primary: docs/acl.md "Several datacenters") is
 * then asked of the primary, through the servers' `?dc` forwarding.
 */
export function tokenFetcher(link: ServerLink, datacenter: string, primary: string = datacenter): (secret: string | undefined) => Promise<TokenGrant> {
  const ask = async (secret: string | undefined, consistency: Consistency, dc = datacenter): Promise<TokenGrant> => {
    const opts = defaultQueryOptions(dc, secret, { consistency });
    const req: ClientRead = { endpoint: 'acl.token-resolve', args: {}, opts };
    const reply = fromEnvelope(await link.call<{ result: { value: TokenGrant } }>('client.read', req, ATTEMPT_MS, BUDGET_MS));
    return reply.result.value;
  };
  return async (secret) => {
    try {
      return await ask(secret, 'stale');
    } catch (err) {
      if (secret === undefined || !isAclNotFound(err)) throw err;
      try {
        return await ask(secret, 'default');
      } catch (again) {
        if (!isAclNotFound(again)) throw err;
        if (primary === datacenter) throw again;
        return await ask(secret, 'stale', primary);
      }
    }
  };
}
