// The two probes that touch the network: an HTTP request and a TCP connect, each bounded by the
// check's timeout. They never throw: a failure is a critical result whose output says why.
import { request as httpRequest, STATUS_CODES } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import type { CheckKind } from './check-spec';
import { capOutput, httpProbeResult, OUTPUT_MAX_BYTES, type ProbeResult } from './check-output';

type HttpKind = Extract<CheckKind, { type: 'http' }>;
type TcpKind = Extract<CheckKind, { type: 'tcp' }>;

const USER_AGENT = 'Registry Health Check';

export function httpProbe(kind: HttpKind): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (r: ProbeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const fail = (why: string) => done({ status: 'critical', output: capOutput(`HTTP ${kind.method} ${kind.url}: ${why}`) });
    let url: URL;
    try {
      url = new URL(kind.url);
    } catch {
      fail('invalid URL');
      return;
    }
    const headers: Record<string, string | string[]> = { 'User-Agent': USER_AGENT, Accept: 'text/plain, text/*, */*' };
    for (const [name, values] of Object.entries(kind.header)) headers[name] = values;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, { method: kind.method, headers, rejectUnauthorized: !kind.tlsSkipVerify, agent: false });
    const timer = setTimeout(() => {
      req.destroy();
      fail(`request timed out after ${kind.timeoutMs} ms`);
    }, kind.timeoutMs);
    req.on('error', (err) => fail(err.message));
    req.on('response', (res) => {
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
    req.end();
  });
}

export function tcpProbe(kind: TcpKind): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const i = kind.address.lastIndexOf(':');
    const host = kind.address.slice(0, i).replace(/^\[(.*)\]$/, '$1');
    const port = Number(kind.address.slice(i + 1));
    const socket = connect({ host, port });
    let settled = false;
    const done = (r: ProbeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => done({ status: 'critical', output: `TCP connect ${kind.address}: timed out after ${kind.timeoutMs} ms` }), kind.timeoutMs);
    socket.once('connect', () => done({ status: 'passing', output: `TCP connect ${kind.address}: Success` }));
    socket.once('error', (err) => done({ status: 'critical', output: `TCP connect ${kind.address}: ${err.message}` }));
  });
}
