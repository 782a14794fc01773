// The two probes that touch the network: an HTTP request and a TCP connect, each bounded by the
// check's timeout. They never throw and never reject: whatever goes wrong — a URL Node cannot
// parse, a port out of range, a header Node refuses, a host that does not resolve — is a critical
// result whose output says why, as Consul reports a check that cannot even start (issue 31).
import { request as httpRequest, STATUS_CODES, type ClientRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, isIPv4, type Socket } from 'node:net';
import type { CheckKind } from './check-spec';
import { capOutput, httpProbeResult, OUTPUT_MAX_BYTES, type ProbeResult } from './check-output';
import { MAX_TIMER_MS } from './long-timer';

type HttpKind = Extract<CheckKind, { type: 'http' }>;
type TcpKind = Extract<CheckKind, { type: 'tcp' }>;

const USER_AGENT = 'Registry Health Check';

const reasonOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The URL a check names, as Go's net/url would take it: Node's WHATWG parser refuses a bracketed
 * IPv4 host (`http://[127.0.0.1]:9998/health`, what fabio registers), which Go accepts and dials
 * as the plain address; that one form is rewritten, anything else Node refuses stays refused.
 */
export function checkUrl(text: string): URL {
  try {
    return new URL(text);
  } catch (err) {
    const m = /^([a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?)\[([0-9.]+)\](.*)$/is.exec(text);
    if (m && isIPv4(m[2]!)) return new URL(`${m[1]}${m[2]}${m[3]}`);
    throw err;
  }
}

export function httpProbe(kind: HttpKind): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let req: ClientRequest | undefined;
    const done = (r: ProbeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const fail = (why: string) => done({ status: 'critical', output: capOutput(`HTTP ${kind.method} ${kind.url}: ${why}`) });
    try {
      const url = checkUrl(kind.url);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        fail(`unsupported protocol scheme ${JSON.stringify(url.protocol.slice(0, -1))}`);
        return;
      }
      // User-chosen header names go into a map without a prototype ("__proto__" is just a name).
      const headers: Record<string, string | string[]> = Object.assign(Object.create(null) as Record<string, string | string[]>, {
        'User-Agent': USER_AGENT,
        Accept: 'text/plain, text/*, */*',
      });
      for (const [name, values] of Object.entries(kind.header)) headers[name] = values;
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      timer = setTimeout(() => {
        req?.destroy();
        fail(`request timed out after ${kind.timeoutMs} ms`);
      }, Math.min(kind.timeoutMs, MAX_TIMER_MS));
      // Throws for what Node refuses before sending (a method or header it cannot write).
      const sent = send(url, { method: kind.method, headers, rejectUnauthorized: !kind.tlsSkipVerify, agent: false });
      req = sent;
      sent.on('error', (err) => fail(err.message));
      sent.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const finish = () => {
          const body = Buffer.concat(chunks).subarray(0, OUTPUT_MAX_BYTES).toString('utf8');
          const code = res.statusCode ?? 0;
          done(httpProbeResult(kind.method, kind.url, code, res.statusMessage || STATUS_CODES[code] || '', body));
          res.destroy();
        };
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          // Only the start of the body is reported; stop reading a large one.
          if (size >= OUTPUT_MAX_BYTES) finish();
        });
        res.on('end', finish);
        res.on('error', (err) => fail(err.message));
      });
      sent.end();
    } catch (err) {
      req?.destroy();
      fail(reasonOf(err));
    }
  });
}

/** host and port of a TCP check's address, or why there are none (Go's net.SplitHostPort texts). */
export function tcpTarget(address: string): { host: string; port: number } | { error: string } {
  const i = address.lastIndexOf(':');
  if (i < 0) return { error: `address ${address}: missing port in address` };
  const host = address.slice(0, i).replace(/^\[(.*)\]$/, '$1');
  const portText = address.slice(i + 1);
  if (!/^\d+$/.test(portText)) return { error: `address ${address}: invalid port` };
  const port = Number(portText);
  if (port > 65_535) return { error: `address ${portText}: invalid port` };
  return { host, port };
}

export function tcpProbe(kind: TcpKind): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let socket: Socket | undefined;
    const done = (r: ProbeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket?.destroy();
      resolve(r);
    };
    const fail = (why: string) => done({ status: 'critical', output: capOutput(`TCP connect ${kind.address}: ${why}`) });
    try {
      const target = tcpTarget(kind.address);
      if ('error' in target) {
        fail(target.error);
        return;
      }
      timer = setTimeout(() => fail(`timed out after ${kind.timeoutMs} ms`), Math.min(kind.timeoutMs, MAX_TIMER_MS));
      // Throws for what Node refuses before dialling (a port it does not take).
      const s = connect({ host: target.host, port: target.port });
      socket = s;
      s.once('connect', () => done({ status: 'passing', output: `TCP connect ${kind.address}: Success` }));
      s.once('error', (err) => fail(err.message));
    } catch (err) {
      fail(reasonOf(err));
    }
  });
}
