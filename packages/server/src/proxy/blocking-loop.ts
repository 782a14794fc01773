// One blocking-query loop against the agent: fetch, hand over each new answer, fetch again with the
// answer's index (or hash); on an error wait (doubling to 30 s) and try again, until stopped. The
// first answer (or the first failure, while nothing was ever fetched) settles `ready`.
import type { AgentAnswer } from './agent-api';

export interface BlockingLoop {
  ready: Promise<void>;
  stop(): void;
}

export function blockingLoop<T>(
  fetch: (last: { index?: number; hash?: string }, signal: AbortSignal) => Promise<AgentAnswer<T>>,
  onAnswer: (value: T, answer: AgentAnswer<T>) => void,
  onError: (err: Error) => void,
): BlockingLoop {
  const ac = new AbortController();
  let settle: { ok: () => void; fail: (e: Error) => void } | undefined;
  const ready = new Promise<void>((ok, fail) => (settle = { ok, fail }));
  void (async () => {
    let last: { index?: number; hash?: string } = {};
    let backoff = 250;
    while (!ac.signal.aborted) {
      try {
        const a = await fetch(last, ac.signal);
        backoff = 250;
        const changed = a.hash ? a.hash !== last.hash : a.index !== last.index || a.index === 0;
        last = { index: a.index || undefined, hash: a.hash || undefined };
        if (changed) onAnswer(a.body, a);
        settle?.ok();
        settle = undefined;
      } catch (err) {
        if (ac.signal.aborted) break;
        if (settle) {
          settle.fail(err as Error);
          settle = undefined;
        } else onError(err as Error);
        await new Promise((r) => setTimeout(r, backoff).unref());
        backoff = Math.min(30_000, backoff * 2);
      }
    }
  })();
  return { ready, stop: () => ac.abort() };
}
