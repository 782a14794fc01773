// How a client agent asks the servers what a token grants (acl/cached-resolver.ts): the read
// `acl.token-resolve` with the token itself as the request's token, `stale` as Consul's client
// asks (AllowStale: any server answers from its own replicated tables, no leader needed). Its own
// short budget, shorter than an ordinary forwarded read's: while no server answers, the down policy
// should answer the request soon rather than after the usual 15 s.
import { fromEnvelope } from '../rpc/envelope';
import type { QueryOptions } from '../rpc/query-options';
import type { ClientRead } from '../cluster/client-facts';
import type { TokenGrant } from '../acl/token-grant';
import type { ServerLink } from './server-link';

const ATTEMPT_MS = 2_000;
const BUDGET_MS = 5_000;

export function tokenFetcher(link: ServerLink, datacenter: string): (secret: string | undefined) => Promise<TokenGrant> {
  return async (secret) => {
    const opts: QueryOptions = { datacenter, token: secret, consistency: 'stale', cached: false, minIndex: 0, waitMs: undefined, cacheControl: { mustRevalidate: false } };
    const req: ClientRead = { endpoint: 'acl.token-resolve', args: {}, opts };
    const reply = fromEnvelope(await link.call<{ result: { value: TokenGrant } }>('client.read', req, ATTEMPT_MS, BUDGET_MS));
    return reply.result.value;
  };
}
