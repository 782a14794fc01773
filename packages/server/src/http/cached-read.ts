// `?cached` on the service reads (`/catalog/service`, `/health/service` and their connect forms):
// answered by the agent cache's background-refreshed entry instead of a server round trip.
import type { GetOptions } from '../cache/agent-cache';
import type { CacheAnswer } from '../cache/cache-answer';
import { effectiveWait } from '../rpc/blocking';
import type { RouteContext } from './route';
import { readInto, waitSignal, type RouteDeps } from './routes/deps';
import type { ReadArgs, ReadName, ReadValue } from '../rpc/contract';

/**
 * X-Cache and Age, as Consul's agent sets them for cached answers, and the leader metadata of the
 * fetch behind the answer (X-Registry-KnownLeader / -LastContact, as on uncached reads; issue 15).
 */
export function setCacheHeaders(ctx: RouteContext<any, any, any>, answer: Pick<CacheAnswer<unknown>, 'hit' | 'ageS' | 'meta'>): void {
  ctx.meta.headers['X-Cache'] = answer.hit ? 'HIT' : 'MISS';
  if (answer.hit) ctx.meta.headers.Age = String(answer.ageS);
  if (answer.meta) {
    ctx.meta.knownLeader = answer.meta.knownLeader;
    ctx.meta.lastContactMs = answer.meta.lastContactMs;
  }
}

/** A request's blocking parameters, for a wait on a cache entry. */
export function cacheWait(ctx: RouteContext<any, any, any>): GetOptions {
  return { minIndex: ctx.opts.minIndex, waitMs: effectiveWait(ctx.opts.waitMs), signal: waitSignal(ctx) };
}

/** readInto, or the agent cache when the request says `?cached`. Not itself async: an uncached read takes no extra promise. */
export function readMaybeCached<K extends ReadName>(deps: RouteDeps, ctx: RouteContext<any, any, any>, endpoint: K, args: ReadArgs<K>): Promise<ReadValue<K>> {
  if (!ctx.opts.cached) return readInto(deps, ctx, endpoint, args);
  return readCached(deps.connect, ctx, endpoint, args);
}

async function readCached<K extends ReadName>(mesh: RouteDeps['connect'], ctx: RouteContext<any, any, any>, endpoint: K, args: ReadArgs<K>): Promise<ReadValue<K>> {
  const answer = await mesh.cachedRead<ReadValue<K>>(endpoint, args, ctx.opts, cacheWait(ctx));
  ctx.meta.index = answer.index;
  setCacheHeaders(ctx, answer);
  return answer.value;
}
