// Ports for the servers tests start. A port is checked free, released, then bound by a child
// process a moment later, so something may take it in between. The usual taker is not another
// test's listener but any outgoing connection on the machine: the kernel gives those their local
// port from the ephemeral range, which is also where `listen(0)` picks from. So ports are chosen
// below that range, where no outgoing connection lands; only another jest worker choosing the same
// port in the same instant can still collide (the cluster harness retries that case).
import { appendFileSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const LOWEST = 10_000;

/** The first port of the kernel's ephemeral range (Linux's default when it cannot be read). */
function ephemeralStart(): number {
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(first) && first > LOWEST + 1000) return first;
  } catch {
    // Not Linux: fall through.
  }
  return 32_768;
}

/**
 * Each jest worker takes its ports from a slice of its own. A port is reused once the test that had
 * it is over, and a server of another worker's test that still dials it (a cluster whose member was
 * killed; a server retrying -retry-join) reached the new owner: CI saw dead-server-cleanup's
 * cluster take such a stranger in as a fourth voter through a join, two live servers of four, and
 * no leader for good. Within one worker tests run one at a time and end their processes.
 */
const WORKERS = 4;
const WORKER = (Math.max(1, Number(process.env.JEST_WORKER_ID) || 1) - 1) % WORKERS;
const SPAN = Math.floor((ephemeralStart() - LOWEST) / WORKERS);
const FIRST = LOWEST + WORKER * SPAN;
const END = FIRST + SPAN;
/**
 * Ports this jest worker has already handed out, in every test file it ran: never twice, even once
 * released. Kept in a file named by the worker's pid, because jest loads this module afresh for each
 * test file: a Set alone forgot the ports of earlier files, and CI saw dead-server-cleanup's cluster
 * take in a stranger from the same worker's slice (127.0.0.1:18501, dialling a port an earlier file
 * had used) as a fourth voter. Past LEDGER_FALLBACK_TRIES a port of an earlier file is taken again.
 */
const LEDGER = join(tmpdir(), `registry-test-ports-${process.pid}`);
const LEDGER_FALLBACK_TRIES = 5_000;
const earlierFiles = ((): Set<number> => {
  try {
    return new Set(readFileSync(LEDGER, 'utf8').split('\n').filter(Boolean).map(Number));
  } catch {
    return new Set();
  }
})();
const handedOut = new Set<number>();

function tryListen(port: number): Promise<Server | undefined> {
  return new Promise((done) => {
    const srv = createServer();
    srv.once('error', () => done(undefined));
    srv.listen(port, '127.0.0.1', () => done(srv));
  });
}

/** `count` distinct loopback ports, all free at once, none handed out before by this process. */
export async function freePorts(count: number): Promise<number[]> {
  const held: Server[] = [];
  const ports: number[] = [];
  try {
    for (let tries = 0; ports.length < count; tries++) {
      if (tries > 10_000) throw new Error(`no ${count} free ports in ${FIRST}..${END - 1}`);
      const port = FIRST + Math.floor(Math.random() * (END - FIRST));
      if (handedOut.has(port) || (tries < LEDGER_FALLBACK_TRIES && earlierFiles.has(port))) continue;
      const srv = await tryListen(port);
      if (!srv) continue;
      held.push(srv);
      ports.push(port);
      handedOut.add(port);
      appendFileSync(LEDGER, `${port}\n`);
    }
    return ports;
  } finally {
    await Promise.all(held.map((srv) => new Promise<void>((done) => srv.close(() => done()))));
  }
}

export async function freePort(): Promise<number> {
  return (await freePorts(1))[0] as number;
}
