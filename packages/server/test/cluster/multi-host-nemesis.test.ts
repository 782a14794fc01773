// The nemesis on hosts of their own (issue #25): the run of nemesis.test.ts — four workloads, their
// checkers and the linearizability checker (support/nemesis-run.ts) — against three servers and
// two client agents, each in a network namespace of its own with `-bind 0.0.0.0`. Clients send
// every request to any of the five agents from the test's own host, so a write may travel client
// agent → server → leader across the bridge. The faults, aimed at the leader of the moment:
// SIGKILL (then restart), its packets dropped to and from the other hosts (iptables; a client
// agent goes with each side, so one forwards into the minority), its link taken down (then up),
// and SIGSTOP past an election timeout (then SIGCONT).
//
// The loopback run stays (nemesis.test.ts): it needs no root, runs more rounds in less time, and
// NEMESIS_BIN lets it run an older build. This one adds the topology: advertised addresses only,
// a black hole instead of a refused connection, client agents in the path.
//
// Bounded: NEMESIS_HOST_ROUNDS rounds (2 by default) of four faults, about 2 minutes on a busy
// 2-core machine, within the 240 s timeout below. Needs root, iproute2 and iptables; skipped with
// the reason printed otherwise. The namespaces and processes are removed afterwards, also on failure.
import { netnsUnavailable, packetDropUnavailable } from '../support/netns';
import { eventually } from '../support/wait';
import type { FaultKind, Nemesis } from './support/nemesis-faults';
import { HostCluster } from './support/host-cluster';
import { runNemesis } from './support/nemesis-run';

const ROUNDS = Number(process.env.NEMESIS_HOST_ROUNDS ?? 2);
const FAULTS: FaultKind[] = ['kill', 'isolate', 'link-down', 'pause'];

jest.setTimeout(240_000);

const unavailable = netnsUnavailable() ?? packetDropUnavailable();
if (unavailable) console.warn(`multi-host-nemesis.test.ts skipped: ${unavailable}`);
const testHosts = unavailable ? test.skip : test;

let cluster: HostCluster | undefined;
let nemesis: Nemesis | undefined;
afterAll(async () => {
  nemesis?.release();
  await cluster?.stop();
});

testHosts('nemesis on hosts: leader killed, cut off by dropped packets and by a down link, paused; clients through client agents; no safety violation', async () => {
  const c = await HostCluster.start({ servers: 3, clients: 2, extraArgs: ['-log-level', 'info'] });
  cluster = c;
  // Five agents starting at once on a shared machine: wait generously for a leader, and for each
  // client agent to have joined (a write through it answered), before the workloads start.
  await c.waitForLeader(120_000);
  for (const client of c.clients) {
    await c.agent(client.index).ready(60_000);
    const joined = await eventually(async () => (await c.http(client.index, 'PUT', `/v1/kv/joined/${client.node}`, 'x', { timeoutMs: 20_000 })).body.trim() === 'true', 60_000, 500);
    if (!joined) throw new Error(`${client.node} never took a write\n${c.diagnostics()}`);
  }
  await runNemesis(c, {
    rounds: ROUNDS,
    faults: FAULTS,
    targets: c.members.map((m) => m.index),
    diagnostics: () => c.diagnostics(),
    onNemesis: (n) => (nemesis = n),
  });
});
