// Errors a caller of Transport.call can tell apart.

/** No answer within the caller's deadline; the remote may still have acted on the request. */
export class RpcTimeoutError extends Error {
  constructor(readonly address: string, readonly method: string, readonly timeoutMs: number) {
    super(`rpc ${method} to ${address} timed out after ${timeoutMs} ms`);
    this.name = 'RpcTimeoutError';
  }
}

/** The remote handler threw; `remoteName` is the remote error's name (e.g. NotLeaderError). */
export class RemoteError extends Error {
  constructor(message: string, readonly remoteName: string, readonly data?: unknown) {
    super(message);
    this.name = 'RemoteError';
  }
}

/** The connection was lost (or never made) before the answer arrived. */
export class RpcConnectionError extends Error {
  constructor(readonly address: string, readonly method: string, cause: Error) {
    super(`rpc ${method} to ${address} failed: ${cause.message}`, { cause });
    this.name = 'RpcConnectionError';
  }
}
