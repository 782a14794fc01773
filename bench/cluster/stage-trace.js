// Preload (`BENCH_CLUSTER_NODE_OPTIONS="-r $PWD/bench/cluster/stage-trace.js"`): where one write's
// time goes at c=1. Wraps a few methods of the built raft and Node's HTTP server and notes each
// call with an absolute timestamp (µs, comparable across the three processes on one machine), then
// writes $BENCH_STAGE_DIR/stages-<pid>.txt at exit. bench/cluster/stage-report.js merges the files
// and prints, per stage of a write, the median and p90 time it took. Only for measuring: it adds a
// little work to every step it watches.
'use strict';
if (process.argv[2] === 'agent') install();

function install() {
  const { performance } = require('node:perf_hooks');
  const { writeFileSync, mkdirSync } = require('node:fs');
  const { join } = require('node:path');
  const http = require('node:http');
  const root = join(__dirname, '..', '..', 'packages', 'raft', 'dist');
  const { RaftNode } = require(join(root, 'node', 'raft-node.js'));
  const { LevelStorage } = require(join(root, 'storage', 'level-storage.js'));
  const { WalStorage } = require(join(root, 'storage', 'wal-storage.js'));
  const { TcpTransport } = require(join(root, 'transport', 'tcp-transport.js'));

  const origin = performance.timeOrigin;
  const events = [];
  const MAX = 2_000_000;
  const note = (what) => {
    if (events.length < MAX) events.push(`${((origin + performance.now()) * 1000).toFixed(0)} ${what}`);
  };
  const wrap = (proto, name, label) => {
    const orig = proto[name];
    proto[name] = function (...args) {
      note(label(this, args));
      return orig.apply(this, args);
    };
  };
  const wrapAsync = (proto, name, stage, details) => {
    const orig = proto[name];
    proto[name] = function (...args) {
      note(`${stage}.start ${details(args)}`);
      const p = orig.apply(this, args);
      p.then(() => note(`${stage}.end`), () => undefined);
      return p;
    };
  };

  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, ...args) {
    if (event === 'request') note(`http.req ${args[0].method}`);
    return emit.call(this, event, ...args);
  };
  wrap(http.ServerResponse.prototype, 'end', () => 'http.end');
  wrap(RaftNode.prototype, 'propose', () => 'propose');
  wrap(RaftNode.prototype, 'drive', () => 'drive');
  wrap(RaftNode.prototype, 'onMessage', (_n, [m]) => `recv.${m.type}`);
  wrap(RaftNode.prototype, 'apply', (_n, [entries]) => `apply n=${entries.length}`);
  wrapAsync(RaftNode.prototype, 'handleReady', 'ready', ([r]) => `e=${r.entries.length} c=${r.committed.length} m=${r.messages.map((m) => m.type).join(',') || '-'}`);
  wrapAsync(LevelStorage.prototype, 'append', 'append', ([, entries]) => `e=${entries.length}`);
  wrapAsync(WalStorage.prototype, 'append', 'append', ([, entries]) => `e=${entries.length}`);
  wrap(TcpTransport.prototype, 'send', (_t, [, m]) => `send.${m.type}`);

  // GC pauses, with their own start times, so a slow write can be matched to a collection.
  const { PerformanceObserver } = require('node:perf_hooks');
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (events.length >= MAX) return;
      const at = (origin + e.startTime) * 1000;
      const kind = e.detail?.kind ?? e.kind;
      events.push(`${at.toFixed(0)} gc.start k=${kind}`, `${(at + e.duration * 1000).toFixed(0)} gc.end`);
    }
  }).observe({ entryTypes: ['gc'] });

  process.on('exit', () => {
    const dir = process.env.BENCH_STAGE_DIR || '.';
    mkdirSync(dir, { recursive: true });
    const node = process.argv[process.argv.indexOf('-node') + 1];
    writeFileSync(join(dir, `stages-${node}-${process.pid}.txt`), events.map((e) => `${e} ${node}`).join('\n') + '\n');
  });
}
