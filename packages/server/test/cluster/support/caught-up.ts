import { sleep } from '../../support/wait';
import type { HttpAnswer, HttpOptions } from './http-answer';

export interface CaughtUpTarget {
  readonly servers: ReadonlyArray<{ readonly index: number }>;
  running(i: number): boolean;
  http(i: number, method: string, path: string, body?: unknown, options?: HttpOptions): Promise<HttpAnswer>;
  diagnostics(): string;
}

/**
 * Until every running server answers a stale read with `X-Registry-KnownLeader: true`: it follows a
 * leader and has caught up with it. A server that started without Raft state (one that heard the
 * leader before its own bootstrap_expect count was met, or joined after) neither votes nor stands
 * for election until then (docs/raft.md, "A server that lost its data dir"), so a test that cuts the
 * leader off and expects the others to elect must wait for this first.
 */
export async function waitAllCaughtUp(c: CaughtUpTarget, timeoutMs = 30_000): Promise<void> {
  const caughtUp = async (i: number): Promise<boolean> => {
    if (!c.running(i)) return true;
    const r = await c.http(i, 'GET', '/v1/catalog/nodes?stale', undefined, { timeoutMs: 5_000 }).catch(() => null);
    return r?.status === 200 && r.headers['x-registry-knownleader'] === 'true';
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await Promise.all(c.servers.map((s) => caughtUp(s.index)))).every(Boolean)) return;
    if (Date.now() > deadline) throw new Error(`not every server caught up with a leader within ${timeoutMs} ms\n${c.diagnostics()}`);
    await sleep(50);
  }
}
