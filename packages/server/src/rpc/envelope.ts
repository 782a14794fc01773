// What crosses the internal RPC port for forwarded requests: results or errors with their HTTP
// status, so a forwarded request fails the same way as a local one.
import { HttpError } from '../http/errors';

export type Envelope<T = unknown> =
  | { ok: true; value: T }
  | { ok: false; status: number; message: string }
  /**
   * The receiver is not (or no longer) the leader: the sender should find the leader again.
   * `maybeApplied`: the write reached a log before leadership was lost, so it may still commit;
   * only a re-send under the same request id is safe, and giving up means "outcome unknown".
   */
  | { ok: false; retry: true; message: string; maybeApplied?: boolean };

export function toEnvelope(err: unknown): Envelope<never> {
  if (err instanceof HttpError) return { ok: false, status: err.status, message: err.message };
  return { ok: false, status: 500, message: err instanceof Error ? err.message : String(err) };
}

export function fromEnvelope<T>(env: Envelope<T>): T {
  if (env.ok) return env.value;
  if ('retry' in env) throw new HttpError(500, env.message);
  throw new HttpError(env.status, env.message);
}
