// An idle -dev server gives back what its start-up made V8's young generation grow to (issue #30,
// docs/benchmarks.md "Memory at rest"): its resident memory, read from /proc/<pid>/status of the
// process the test spawned, falls under a bound within a minute of start. Before, start-up left
// the young generation at 32 MiB and an idle agent held 100–110 MiB until V8 shrank it by itself,
// minutes later (76–80 MiB after that). The bound is generous: it only catches the young generation
// (or ~10 MiB of anything else) left behind. And it has not loaded the libraries (or their parts)
// that an idle server does not use, listed by a preloaded test helper (support/module-list.js).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../support/dev-agent';
import { freePort, spawnAgent, type AgentProcess } from '../support/processes';

jest.setTimeout(120_000);

const BOUND_MIB = 92;
/** Loaded at start: 1,154 before issue #30's lazy loading, 1,061 after; room for growth, not for a library. */
const MAX_MODULES = 1_120;
/** Parts of dependencies no idle -dev server needs (each was loaded at start before issue #30). */
const NOT_LOADED = [
  '/node_modules/@opentelemetry/api/', // prom-client's exemplars, never enabled
  '/node_modules/prom-client/lib/summary.js', // prom-client's index: the agent has no summaries
  '/node_modules/node-forge/lib/tls.js', // forge's index: the CA uses its X.509 part only
  '/node_modules/tar-stream/', // writes snapshot archives only
];
const dir = mkdtempSync(join(tmpdir(), 'registry-memory-'));
const moduleList = join(dir, 'modules.txt');
let proc: AgentProcess | null = null;

afterAll(async () => {
  if (proc && proc.child.exitCode === null) {
    proc.child.kill('SIGKILL');
    await proc.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

function rssMiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]) / 1024;
}

test('an idle -dev server settles under the resident-memory bound', async () => {
  const [httpPort, serverPort, dnsPort] = [await freePort(), await freePort(), await freePort()];
  proc = spawnAgent(['-dev', '-dns-port', String(dnsPort)], httpPort, serverPort, join(dir, 'agent.log'), {
    NODE_OPTIONS: `--require ${join(__dirname, '../support/module-list.js')}`,
    MODULE_LIST: moduleList,
  });
  await waitFor(async () => (await (await fetch(`${proc!.url}/v1/status/leader`)).json()) !== '', 30_000, 100);
  const pid = proc.child.pid!;
  const seen: number[] = [];
  try {
    await waitFor(() => {
      const rss = rssMiB(pid);
      seen.push(Math.round(rss));
      return rss < BOUND_MIB;
    }, 60_000, 1_000);
  } catch {
    throw new Error(`RSS never fell under ${BOUND_MIB} MiB; MiB each second: ${seen.join(' ')}`);
  }
});

test('an idle -dev server has not loaded what it does not use', async () => {
  expect(proc).not.toBeNull();
  proc!.child.kill('SIGUSR2');
  await waitFor(() => existsSync(moduleList), 10_000, 100);
  const modules = readFileSync(moduleList, 'utf8').split('\n').filter(Boolean);
  expect(NOT_LOADED.filter((part) => modules.some((m) => m.includes(part)))).toEqual([]);
  expect(modules.length).toBeLessThanOrEqual(MAX_MODULES);
});
