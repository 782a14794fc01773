// Raft throughput: 3 servers in one process over real TCP (127.0.0.1) and LevelDB (temp dirs),
// a counting state machine, 64-byte commands, closed-loop proposers at the leader.
//   npx tsc -b packages/raft && node bench/raft-throughput/run.js [seconds-per-cell] [concurrency,...]
'use strict';
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { LevelStorage, RaftNode, TcpTransport } = require('../../packages/raft/dist');

const cellSeconds = Number(process.argv[2] ?? 5);
const levels = (process.argv[3] ?? '1,16,64,256').split(',').map(Number);
const MAX_PROPOSALS_PER_CELL = 50_000;
const WARMUP_MS = 500;

class CountingFsm {
  constructor() {
    this.count = 0;
  }
  apply() {
    return ++this.count;
  }
  snapshot() {
    return Buffer.from(String(this.count));
  }
  restore(data) {
    this.count = Number(Buffer.from(data).toString());
  }
}

async function startCluster() {
  const members = [];
  for (let i = 1; i <= 3; i++) {
    const dir = mkdtempSync(join(tmpdir(), `raft-bench-n${i}-`));
    const transport = await TcpTransport.listen({ host: '127.0.0.1', port: 0 });
    const fsm = new CountingFsm();
    const node = await RaftNode.create({ id: `n${i}`, storage: new LevelStorage({ path: dir }), transport, fsm });
    members.push({ id: `n${i}`, dir, transport, node, fsm });
  }
  const servers = members.map((m) => ({ id: m.id, address: m.transport.address }));
  await Promise.all(members.map((m) => m.node.bootstrap(servers)));
  members.forEach((m) => m.node.start());
  const deadline = Date.now() + 10_000;
  for (;;) {
    const leader = members.find((m) => m.node.leaderReady());
    if (leader) return { members, leader };
    if (Date.now() > deadline) throw new Error('no leader elected');
    await new Promise((r) => setTimeout(r, 20));
  }
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function cell(leader, concurrency) {
  const payload = Buffer.alloc(64, 'x');
  const latencies = [];
  let stopAt = Infinity;
  let measuring = false;
  let done = 0;
  let errors = 0;
  const proposer = async () => {
    while (Date.now() < stopAt && done < MAX_PROPOSALS_PER_CELL) {
      const t0 = process.hrtime.bigint();
      try {
        await leader.node.propose(payload);
      } catch {
        errors++;
        continue;
      }
      if (measuring) {
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        done++;
      }
    }
  };
  const warmupEnds = Date.now() + WARMUP_MS;
  stopAt = warmupEnds + cellSeconds * 1000;
  setTimeout(() => (measuring = true), WARMUP_MS);
  const started = new Promise((r) => setTimeout(() => r(process.hrtime.bigint()), WARMUP_MS));
  await Promise.all(Array.from({ length: concurrency }, proposer));
  const elapsedS = Number(process.hrtime.bigint() - (await started)) / 1e9;
  latencies.sort((a, b) => a - b);
  return {
    concurrency,
    proposals: done,
    perSecond: done / elapsedS,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors,
  };
}

async function main() {
  const { members, leader } = await startCluster();
  const rows = [];
  for (const c of levels) {
    const r = await cell(leader, c);
    rows.push(r);
    process.stderr.write(`c=${c}: ${Math.round(r.perSecond)}/s\n`);
  }
  console.log(`node ${process.version}, 3 servers in one process, ${cellSeconds} s per cell (or ${MAX_PROPOSALS_PER_CELL} proposals), 64-byte commands\n`);
  console.log('| proposers | proposals/s | p50 ms | p99 ms | proposals | errors |');
  console.log('|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(
      `| ${r.concurrency} | ${Math.round(r.perSecond).toLocaleString('en-US')} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.proposals} | ${r.errors} |`,
    );
  }
  const stats = leader.node.stats();
  console.log(`\nleader: ${stats.readies} ready batches, ${stats.appendedEntries} entries appended (${(stats.appendedEntries / Math.max(1, stats.readies)).toFixed(1)} per batch)`);
  for (const m of members) {
    await m.node.stop();
    await m.transport.close();
    rmSync(m.dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
