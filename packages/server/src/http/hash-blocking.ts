// Hash-based blocking for agent-local endpoints (`?hash=` + `wait`): answer at once when the current
// ContentHash differs from the client's, else wait for a change to this agent's local state or the wait.
import { effectiveWait } from '../rpc/blocking';
import type { RouteContext } from './route';
import { readQuery } from '../schemas/query-options';
import { Text } from '../schemas/query-fields';
import { monotonicMs } from '../time';

/** The query of a hash-blocking read: the shared options (`wait`) and `hash`. */
export const HASH_QUERY = readQuery({ hash: Text() });

/** What a hash-blocking read waits on: the local state's changes (local/local-state.ts onChange). */
export interface Changes {
  onChange(fn: () => void): () => void;
}

export async function blockOnHash<T extends { ContentHash: string }>(local: Changes, ctx: RouteContext<any, { hash?: string }, any>, current: () => T): Promise<T> {
  let value = current();
  const hash = ctx.query.hash;
  if (hash && hash === value.ContentHash) {
    const deadline = monotonicMs() + effectiveWait(ctx.opts.waitMs);
    while (value.ContentHash === hash && monotonicMs() < deadline && !ctx.signal.aborted) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, deadline - monotonicMs());
        const cancel = local.onChange(done);
        ctx.signal.addEventListener('abort', done);
        function done() {
          clearTimeout(timer);
          cancel();
          ctx.signal.removeEventListener('abort', done);
          resolve();
        }
      });
      value = current();
    }
  }
  ctx.meta.headers['X-Registry-ContentHash'] = value.ContentHash;
  return value;
}
