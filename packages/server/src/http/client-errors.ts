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
  /** Where in rawPacket the parser stopped. */
  bytesParsed?: number;
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
    case 'HPE_INVALID_METHOD':
      return invalidMethod(err);
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

/**
 * The request that failed may follow complete ones in the same packet (`DELETE … \r\n\r\n{"a":1}`:
 * a body sent without Content-Length is read as the next request). The parser stops at the byte it
 * could not take (`bytesParsed`); the word around it is the method it read, and the reason names
 * that, or quotes the bytes, never the method of an earlier request in the packet (issue 33 finding 9).
 */
function invalidMethod(err: ClientError): { status: number; reason: string } {
  const packet = err.rawPacket;
  if (!packet) return { status: 400, reason: 'malformed HTTP request: invalid method' };
  const at = Math.min(Math.max(err.bytesParsed ?? 0, 0), packet.length);
  let start = at;
  while (start > 0 && isTokenByte(packet[start - 1]!)) start--;
  if (start === 0 && packet[0] === TLS_HANDSHAKE) return { status: 400, reason: 'malformed HTTP request: a TLS handshake was sent to a plain-HTTP port' };
  let end = at;
  while (end < packet.length && isTokenByte(packet[end]!)) end++;
  const word = packet.subarray(start, end).toString('latin1');
  if (word && packet[end] === 0x20) return { status: 501, reason: `method ${word} not implemented` };
  const bytes = JSON.stringify(packet.subarray(start, start + 40).toString('latin1'));
  const after = start > 0 ? ' after the previous request (a body needs Content-Length or chunked Transfer-Encoding)' : '';
  return { status: 400, reason: `malformed HTTP request: no method in ${bytes}${after}` };
}

function isTokenByte(b: number): boolean {
  return TOKEN.test(String.fromCharCode(b));
}

/** "Invalid header token" → "invalid header token"; a name such as "Transfer-Encoding" keeps its case. */
function lowerFirst(s: string): string {
  return /^[A-Z][a-z]+(?:\s|$)/.test(s) ? s[0].toLowerCase() + s.slice(1) : s;
}

/** A response of Node's HTTP server, as far as the socket knows it, and its request. */
type SocketResponse = NodeJS.EventEmitter & { writableFinished?: boolean; req?: { complete?: boolean } };

/**
 * Run `then` once every response already owed on this socket has been written: the requests the
 * parser took before the bytes it refused are answered first and in order (Node hands the socket to
 * each queued response in turn, as `_httpMessage`), so a parse error never takes a request's place.
 * A request whose own body failed to parse (a bad chunk) is never complete and never answered by its
 * route: the refusal is its answer, at once.
 */
function afterOwedResponses(socket: Duplex, then: () => void): void {
  const owed = (socket as Duplex & { _httpMessage?: SocketResponse | null })._httpMessage;
  if (!owed || owed.writableFinished || owed.req?.complete === false) {
    then();
    return;
  }
  let done = false;
  const next = () => {
    if (done) return;
    done = true;
    // After Node's own 'finish' handling, which passes the socket to the next queued response.
    setImmediate(() => (socket.destroyed ? undefined : afterOwedResponses(socket, then)));
  };
  owed.once('finish', next);
  owed.once('close', next);
}

/** The server's 'clientError' listener. */
export function answerClientError(ctx: ClientErrorContext): (err: Error, socket: Duplex) => void {
  return (err, socket) => {
    const e = err as ClientError;
    // A client that left (ECONNRESET, EPIPE…): nothing to say.
    if (!socket.writable || !(e.code === 'ERR_HTTP_REQUEST_TIMEOUT' || e.code?.startsWith('HPE_'))) {
      socket.destroy();
      return;
    }
    const { status, reason } = clientErrorAnswer(e, ctx);
    ctx.logger?.debug({ code: e.code, status, reason }, 'refused a request the HTTP parser could not take');
    socket.on('error', () => undefined);
    afterOwedResponses(socket, () => {
      if (!socket.writable) return;
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
    });
  };
}
