// `registry` run as the executable it is installed as (node_modules/.bin/registry, the image's
// entry point) gives Node the flags on its first line — V8's helper threads sized to the machine —
// and glibc its tunable for transparent huge pages on large blocks.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const BIN = resolve(__dirname, '..', 'bin', 'registry.js');

describe('the registry executable', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'node-flags-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs Node with --v8-pool-size=0 and glibc.malloc.hugetlb=1', () => {
    const probe = join(dir, 'probe.js');
    const out = join(dir, 'out.json');
    // Preloaded into the command's own process: what Node was started with.
    writeFileSync(
      probe,
      `require('fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify({ execArgv: process.execArgv, tunables: process.env.GLIBC_TUNABLES, hugeKiB: hugeKiB() }));` +
        // A large block, touched: with the tunable glibc asks for huge pages on it.
        `function hugeKiB() { const b = Buffer.alloc(16 << 20); b.fill(1); return Number(/AnonHugePages:\\s+(\\d+)/.exec(require('fs').readFileSync('/proc/self/smaps_rollup', 'utf8'))[1]); }`,
    );
    const text = execFileSync(BIN, ['version'], { env: { ...process.env, NODE_OPTIONS: `--require ${probe}` }, encoding: 'utf8' });
    expect(text).toMatch(/^Registry v/);
    const seen = JSON.parse(readFileSync(out, 'utf8')) as { execArgv: string[]; tunables?: string; hugeKiB: number };
    expect(seen.execArgv).toContain('--v8-pool-size=0');
    expect(seen.tunables).toBe('glibc.malloc.hugetlb=1');
    // Where the kernel gives huge pages on request (THP `madvise` or `always`), the block got some.
    const thp = readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8');
    if (!thp.includes('[never]')) expect(seen.hugeKiB).toBeGreaterThanOrEqual(2048);
  });

  it('is what the container image and scripts/cluster.sh start', () => {
    const root = resolve(__dirname, '..', '..', '..');
    expect(readFileSync(join(root, 'Dockerfile'), 'utf8')).toMatch(/^ENTRYPOINT \["packages\/cli\/bin\/registry\.js"\]$/m);
    expect(readFileSync(join(root, 'scripts', 'cluster.sh'), 'utf8')).toContain('exec env $ENTRY_ENV node $NODE_FLAGS "$BIN" agent');
  });
});
