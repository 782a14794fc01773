// Requests Node's HTTP parser refuses before any route sees them (a malformed or unknown method, raw
// non-ASCII bytes in the path, headers over the size limit, a request not received in time…) get
// the same kind of answer as every other error here: a status and a one-line plain-text reason,
// then the connection is closed. Node's default is a bare status line with no reason.
import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { formatDurationMs as formatDuration } from '@registry/store';

/** What the parser or the server says about a connection ('clientError'). */
interface ClientError extends Error {
  code?: string;
  reason?: string;
  rawPacket?: Buffer;
}

export interface ClientErrorContext {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  logger?: { debug(o: object, msg: string): void };
}

/** RFC 9110 token characters: a word made of these in method position is a method we do not know. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** The first byte of a TLS handshake record. */
const TLS_HANDSHAKE = 0x16;

/** The status and one-line reason for an error of Node's HTTP parser (or its request timeout). */
export function clientErrorAnswer(err: ClientError, ctx: Pick<ClientErrorContext, 'headersTimeoutMs' | 'requestTimeoutMs'>): { status: number; reason: string } {
  const detail = (err.reason ?? err.message).replace(/^Parse Error: /, '').replace(/\s+/g, ' ').trim();
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT': {
      const limits = [
        ctx.headersTimeoutMs > 0 ? `headers within ${formatDuration(ctx.headersTimeoutMs)}` : '',
        ctx.requestTimeoutMs > 0 ? `the whole request within ${formatDuration(ctx.requestTimeoutMs)}` : '',
      ].filter(Boolean);
      return { status: 408, reason: `request timeout: the request was not received in time (${limits.join(', ')})` };
    }
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, reason: `request header fields too large: at most ${maxHeaderSize} bytes of request line and headers` };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, reason: 'chunk extensions too large' };
    case 'HPE_INVALID_METHOD': {
      const packet = err.rawPacket;
      if (packet && packet[0] === TLS_HANDSHAKE) return { status: 400, reason: 'malformed HTTP request: a TLS handshake was sent to a plain-HTTP port' };
      const first = packet ? packet.subarray(0, 64).toString('latin1').split(' ', 1)[0] : '';
      if (first && TOKEN.test(first) && packet && packet.length > first.length) {
        return { status: 501, reason: `method ${first} not implemented` };
      }
      return { status: 400, reason: 'malformed HTTP request: invalid method' };
    }
    case 'HPE_INVALID_URL':
      return { status: 400, reason: `malformed HTTP request: ${lowerFirst(detail)} (percent-encode non-ASCII and control characters in the path and query)` };
    case 'HPE_INVALID_VERSION':
      if (detail === 'Invalid HTTP version') return { status: 505, reason: 'HTTP version not supported: use HTTP/1.1 or HTTP/1.0' };
      break;
    case 'HPE_PAUSED_H2_UPGRADE':
      return { status: 505, reason: 'HTTP version not supported: HTTP/2 is not served here, use HTTP/1.1' };
  }
  return { status: 400, reason: `malformed HTTP request: ${lowerFirst(detail || 'unparseable')}` };
}

/** "Invalid header token" → "invalid header token"; a name such as "Transfer-Encoding" keeps its case. */
function lowerFirst(s: string): string {
  return /^[A-Z][a-z]+(?:\s|$)/.test(s) ? s[0].toLowerCase() + s.slice(1) : s;
}

/** The server's 'clientError' listener. */
export function answerClientError(ctx: ClientErrorContext): (err: Error, socket: Duplex) => void {
  return (err, socket) => {
    const e = err as ClientError;
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
    // A client that left (ECONNRESET, EPIPE…) or an answer already under way: nothing to say.
    if (!socket.writable || inFlight?.headersSent || !(e.code === 'ERR_HTTP_REQUEST_TIMEOUT' || e.code?.startsWith('HPE_'))) {
      socket.destroy();
      return;
    }
    const { status, reason } = clientErrorAnswer(e, ctx);
    ctx.logger?.debug({ code: e.code, status, reason }, 'refused a request the HTTP parser could not take');
    socket.on('error', () => undefined);
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
        'Content-Type: text/plain; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(reason)}\r\n` +
        'Connection: close\r\n\r\n' +
        reason,
    );
    // Closed when the client has read the answer and hung up, or a moment later anyway (closing at
    // once could reset the connection over request bytes still arriving, and lose the answer).
    const timer = setTimeout(() => socket.destroy(), 1_000);
    socket.once('close', () => clearTimeout(timer));
  };
}
