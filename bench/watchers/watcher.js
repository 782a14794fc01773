#!/usr/bin/env node
// One process of blocked watchers for bench/watchers/run.js (which forks it with an IPC channel).
// argv[2] is a JSON job: { url, sources: [local addresses], services: [[name, index], ...],
// first, count, total, wait }. Watcher w (first ≤ w < first+count) long-polls
// GET /v1/health/service/<services[w % services.length]>?index=<its index>&wait=<wait>, each on its
// own keep-alive connection from one of `sources` in turn (127.0.0.x: a server caps connections
// per client address, and one address has only ~28,000 ephemeral ports). Each answer is reported
// to the parent with the system-wide monotonic clock (process.hrtime: CLOCK_MONOTONIC, the same
// in every process), so the parent can time a write against it. Nothing is re-armed after an
// answer: an answer is one wake-up, counted once. A request that fails before any answer (a reset
// or timeout while thousands connect at once) is sent again after a pause, up to RETRIES times, as
// a real watcher (consul-template, a client library's watch loop) retries; the parent counts them.
'use strict';
const http = require('node:http');

const job = JSON.parse(process.argv[2]);
const agents = job.sources.map((localAddress) => new http.Agent({ keepAlive: true, maxSockets: Infinity, localAddress }));
const url = new URL(job.url);
if (url.hostname !== '127.0.0.1') throw new Error(`refusing non-loopback target ${job.url}`);

let opened = 0;
let failed = 0;
let retried = 0;
const RETRIES = 5;

function watch(w, attempt = 0) {
  const [service, index] = job.services[w % job.services.length];
  return new Promise((resolve) => {
    const req = http.get(
      { host: url.hostname, port: url.port, path: `/v1/health/service/${service}?index=${index}&wait=${job.wait}`, agent: agents[w % agents.length] },
      (res) => {
        const t = process.hrtime.bigint().toString(); // the answer's headers are here: it woke
        let head = '';
        res.on('data', (c) => {
          if (res.statusCode !== 200 && head.length < 200) head += c.toString().slice(0, 200);
        });
        res.on('end', () => {
          process.send({ type: 'woke', service, status: res.statusCode, t, body: head });
          resolve();
        });
      },
    );
    req.on('socket', () => opened++);
    req.on('error', (err) => {
      if (attempt < RETRIES) {
        retried++;
        process.send({ type: 'retry', service, message: err.message });
        setTimeout(() => watch(w, attempt + 1).then(resolve), 250 * (attempt + 1) + Math.random() * 250);
        return;
      }
      failed++;
      process.send({ type: 'error', service, message: err.message });
      resolve();
    });
  });
}

(async () => {
  // Opened in groups of 100 every 50 ms (2,000/s a process), so the agent's accept queue (511) and
  // its 10 s headers timeout keep up: 250 every 20 ms lost 4–10 % of the watchers to resets,
  // connect timeouts and 408s while arming 50,000.
  const GROUP = 100;
  for (let w = job.first; w < job.first + job.count; w += GROUP) {
    for (let k = w; k < Math.min(w + GROUP, job.first + job.count); k++) void watch(k);
    await new Promise((r) => setTimeout(r, 50));
  }
  process.send({ type: 'armed', opened, failed, retried, rssMiB: process.memoryUsage.rss() / 2 ** 20 });
})();

process.on('message', (m) => {
  if (m === 'exit') {
    for (const a of agents) a.destroy();
    process.exit(0);
  }
});
process.on('disconnect', () => process.exit(0));
