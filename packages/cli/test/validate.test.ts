// `registry validate` and the agent's refusal of bad configuration, as an operator meets them: the
// built bin, exit codes, and messages naming the key and the file (issue 11).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const BIN = join(__dirname, '..', 'bin', 'registry.js');
const registry = (...args: string[]) => run(process.execPath, [BIN, ...args], { timeout: 20_000 });

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'registry-validate-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('a valid file or directory: exit 0 and "Configuration is valid!"', async () => {
  const conf = join(dir, 'conf.d');
  mkdirSync(conf);
  writeFileSync(join(conf, 'a.json'), JSON.stringify({ data_dir: join(dir, 'data'), acl: { enabled: true, default_policy: 'deny' } }));
  writeFileSync(join(conf, 'b.hcl'), 'service {\n  name = "web"\n  port = 80\n}\nlog_level = "debug"\n');
  const { stdout } = await registry('validate', conf);
  expect(stdout.trim()).toBe('Configuration is valid!');
  expect((await registry('validate', join(conf, 'a.json'))).stdout.trim()).toBe('Configuration is valid!');
  expect((await registry('validate', '-quiet', conf)).stdout).toBe('');
});

test('invalid files: exit 1 and every error printed, each naming its file and key', async () => {
  const conf = join(dir, 'conf.d');
  mkdirSync(conf);
  const a = join(conf, 'a.json');
  const b = join(conf, 'b.hcl');
  writeFileSync(a, JSON.stringify({ data_dir: dir, acl: { enabled: 'false' }, portz: {} }));
  writeFileSync(b, 'ports { http = "8500" }\n');
  const failed = await registry('validate', conf).then(
    () => undefined,
    (err: { code: number; stderr: string }) => err,
  );
  expect(failed?.code).toBe(1);
  expect(failed?.stderr).toContain('Config validation failed:');
  expect(failed?.stderr).toContain(`${a}: acl.enabled must be boolean`);
  expect(failed?.stderr).toContain(`${a}: invalid config key portz`);
  expect(failed?.stderr).toContain(`${b}: ports.http must be integer`);
});

test('a missing path and a config without data_dir fail validation', async () => {
  await expect(registry('validate', join(dir, 'nope.json'))).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('nope.json') });
  writeFileSync(join(dir, 'c.json'), '{}');
  await expect(registry('validate', join(dir, 'c.json'))).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('-data-dir is required') });
});

test('the agent refuses to start on an unknown key, naming key and file', async () => {
  const f = join(dir, 'typo.json');
  writeFileSync(f, JSON.stringify({ acl: { enabled: true, default_polcy: 'deny' } }));
  await expect(registry('agent', '-dev', '-http-port', '0', '-server-port', '0', '-dns-port', '-1', '-config-file', f)).rejects.toMatchObject({
    code: 1,
    stderr: expect.stringContaining(`${f}: invalid config key acl.default_polcy`),
  });
});

test('a bad -log-level names the valid levels', async () => {
  await expect(registry('agent', '-dev', '-log-level', 'loud')).rejects.toMatchObject({
    code: 1,
    stderr: expect.stringContaining('invalid log level "loud": valid levels are trace, debug, info, warn, err'),
  });
});
