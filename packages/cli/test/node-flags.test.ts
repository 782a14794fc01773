// `registry` run as the executable it is installed as (node_modules/.bin/registry, the image's
// entry point) gives Node the flags on its first line: V8's helper threads sized to the machine.
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

  it('runs Node with --v8-pool-size=0', () => {
    const probe = join(dir, 'probe.js');
    const out = join(dir, 'out.json');
    // Preloaded into the command's own process: what Node was started with.
    writeFileSync(
      probe,
      `require('fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify({ execArgv: process.execArgv }));`,
    );
    const text = execFileSync(BIN, ['version'], { env: { ...process.env, NODE_OPTIONS: `--require ${probe}` }, encoding: 'utf8' });
    expect(text).toMatch(/^Registry v/);
    const seen = JSON.parse(readFileSync(out, 'utf8')) as { execArgv: string[] };
    expect(seen.execArgv).toContain('--v8-pool-size=0');
  });

  it('is what the container image and scripts/cluster.sh start', () => {
    const root = resolve(__dirname, '..', '..', '..');
    expect(readFileSync(join(root, 'Dockerfile'), 'utf8')).toMatch(/^ENTRYPOINT \["packages\/cli\/bin\/registry\.js"\]$/m);
    expect(readFileSync(join(root, 'scripts', 'cluster.sh'), 'utf8')).toContain('exec node $NODE_FLAGS "$BIN" agent');
  });
});
