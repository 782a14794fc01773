// Small helpers every bench script shares.
'use strict';
const http = require('node:http');
const net = require('node:net');

/** A port the OS hands out on 127.0.0.1 (bound, then released for the server to take). */
const freePort = () =>
  new Promise((res, rej) => {
    const s = net.createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * An HTTP caller for a bench's own agents: call(base, method, path, body, timeoutMs) answers
 * { status, headers, body } (a Buffer), over keep-alive connections (at most `maxSockets`), and
 * refuses any target but 127.0.0.1. call.close() closes those connections (the process can then exit).
 */
function loopbackCaller({ maxSockets, timeoutMs: defaultTimeoutMs }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const call = (base, method, path, body, timeoutMs = defaultTimeoutMs) => {
    const url = new URL(path, base);
    if (url.hostname !== '127.0.0.1') throw new Error(`refusing non-loopback target ${base}`);
    return new Promise((resolve, reject) => {
      const req = http.request(url, { method, agent, timeout: timeoutMs }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', reject);
      req.end(body);
    });
  };
  call.close = () => agent.destroy();
  return call;
}

module.exports = { freePort, loopbackCaller, sleep };
