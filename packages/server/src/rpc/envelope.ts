// What crosses the internal RPC port for forwarded requests: results, or errors with their kind
// intact (../errors.ts), so a forwarded request fails the same way as a local one.
import { RegistryError, type ErrorKind } from '../errors';

export type Envelope<T = unknown> =
  | { ok: true; value: T }
  | { ok: false; kind: ErrorKind; message: string; headers?: Record<string, string> }
  /**
   * The receiver is not (or no longer) the leader: the sender should find the leader again.
   * `maybeApplied`: the write reached a log before leadership was lost, so it may still commit;
   * only a re-send under the same request id is safe, and giving up means "outcome unknown".
   */
  | { ok: false; retry: true; message: string; maybeApplied?: boolean };

export function toEnvelope(err: unknown): Envelope<never> {
  if (err instanceof RegistryError) {
    const headers = Object.keys(err.headers).length > 0 ? err.headers : undefined;
    return { ok: false, kind: err.kind, message: err.message, ...(headers ? { headers } : {}) };
  }
  return { ok: false, kind: 'Internal', message: err instanceof Error ? err.message : String(err) };
}

/** The error an envelope carries, as it was raised on the other side. */
export function errorOf(env: Exclude<Envelope, { ok: true }>): RegistryError {
  if ('retry' in env) return new RegistryError('Internal', env.message);
  return new RegistryError(env.kind, env.message, env.headers);
}

export function fromEnvelope<T>(env: Envelope<T>): T {
  if (env.ok) return env.value;
  throw errorOf(env);
}
