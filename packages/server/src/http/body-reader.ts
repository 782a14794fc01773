// Reads a request body into one Buffer with a size limit — what `express.raw` does for an
// identity-encoded body, without its per-request option handling. Errors carry the same
// `status`/`type` as body-parser's, so the error mapping in app.ts treats both alike.
import type { IncomingMessage } from 'node:http';

export class BodyError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
    this.name = 'BodyError';
  }
}

/** body-parser's test: a request has a body when it says how long it is or that it is chunked. */
export function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(req.headers['content-length']));
}

/** `1mb`, `512kb`, `100` → bytes (binary multiples, as the `bytes` package reads them). */
export function parseByteLimit(limit: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|tb)?\s*$/i.exec(limit);
  if (!m) throw new Error(`invalid body limit "${limit}"`);
  const unit = (m[2] ?? 'b').toLowerCase();
  const scale = { b: 1, kb: 1 << 10, mb: 1 << 20, gb: 1 << 30, tb: 1024 ** 4 }[unit]!;
  return Math.floor(Number(m[1]) * scale);
}

/** Resolves with the whole body (possibly empty); rejects with a BodyError (413, 400). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const header = req.headers['content-length'];
  const length = header === undefined ? null : Number.parseInt(header, 10);
  if (length !== null && length > limit) {
    req.resume(); // let the connection carry on; the answer does not need the bytes
    return Promise.reject(new BodyError(413, 'entity.too.large', 'request entity too large'));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let done = false;
    const finish = (err: BodyError | null) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      if (err) {
        req.resume();
        reject(err);
        return;
      }
      // Always a copy: a chunk is a view into the socket's read buffer, and a stored KV value
      // must not keep that whole buffer alive.
      resolve(Buffer.concat(chunks, received));
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) finish(new BodyError(413, 'entity.too.large', 'request entity too large'));
      else chunks.push(chunk);
    };
    const onEnd = () => {
      if (length !== null && !Number.isNaN(length) && received !== length) {
        finish(new BodyError(400, 'request.size.invalid', 'request size did not match content length'));
      } else finish(null);
    };
    const onError = (err: Error) => finish(new BodyError(400, 'request.aborted', err.message));
    const onAborted = () => finish(new BodyError(400, 'request.aborted', 'request aborted'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}
