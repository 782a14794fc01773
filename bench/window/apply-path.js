// One server's state-machine cost per write, in one process: the bench/cluster register load's
// commands (a node with one service, nodes drawn from 10,000) encoded as the leader proposes them,
// then decoded and applied as every server does — with the request stamp and the dedup window
// where the build has them. CPU time of the process (GC included) per 1,000 applies, min of rounds.
//   npx tsc -b packages/store && node bench/window/apply-path.js [--repo <worktree>] [--rounds 6]
// --repo measures another build (a worktree of an older commit, built) with this same script, so
// a build before exactly-once (d8dcd59) and after can be set side by side on a loaded machine:
// CPU per apply moves far less with other load than a cluster's writes/s do.
'use strict';
const { join } = require('node:path');
const argAt = (name) => process.argv.indexOf(name);
const repo = argAt('--repo') >= 0 ? process.argv[argAt('--repo') + 1] : join(__dirname, '..', '..');
const ROUNDS = argAt('--rounds') >= 0 ? Number(process.argv[argAt('--rounds') + 1]) : 6;
const store = require(join(repo, 'packages/store/dist/index'));
const stamped = typeof store.encodeEntry === 'function';

const ROUND = 50_000;
const PREFIX = 'AbCdEfGh';
const register = (n) => ({
  type: 'catalog.register',
  req: {
    Datacenter: 'dc1',
    Node: `bench-${String(n).padStart(4, '0')}`,
    Address: `10.1.${Math.floor(n / 256)}.${n % 256}`,
    Service: { Service: 'bench', Port: 8080, Tags: ['v1'] },
  },
});
const cpuMs = (from) => {
  const u = process.cpuUsage(from);
  return (u.user + u.system) / 1000;
};

const s = new store.Store();
let index = 0;
let seq = 0;
const perRound = [];
const at0 = Date.now();
for (let round = 0; round < ROUNDS; round++) {
  // The entries of a round, encoded before timing: the proposing leader's work is not the FSM's.
  const entries = [];
  for (let i = 0; i < ROUND; i++) {
    const cmd = register(Math.floor(Math.random() * 10_000));
    seq++;
    entries.push(stamped ? store.encodeEntry({ cmd, request: { id: `${PREFIX}.${seq.toString(36)}`, at: at0 + seq / 10 } }) : store.encodeCommand(cmd));
  }
  const from = process.cpuUsage();
  for (const bytes of entries) {
    index++;
    if (stamped) {
      const { cmd, request } = store.decodeEntry(bytes);
      s.apply(index, cmd, request);
    } else {
      s.apply(index, store.decodeCommand(bytes));
    }
  }
  perRound.push(cpuMs(from));
}
// The first round fills the catalog and warms the JIT; the window is full from the third on.
const steady = perRound.slice(2);
const per1k = (ms) => ((ms / ROUND) * 1000).toFixed(1);
console.log(`build: ${repo} (${stamped ? 'stamped entries, dedup window' : 'bare commands'})`);
console.log(`apply ${ROUND} register writes a round: ${steady.map((ms) => per1k(ms)).join(' ')} ms CPU per 1,000; min ${per1k(Math.min(...steady))}`);
console.log(`heap used after: ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(1)} MB`);
