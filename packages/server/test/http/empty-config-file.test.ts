// An empty config file (or one of only whitespace) means no settings, in a -config-file and in a
// -config-dir alike, for JSON and HCL; the agent starts and serves HTTP with the defaults.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, buildConfig, createLogger } from '@registry/server';
import { http, waitFor } from '../support/dev-agent';

const dir = mkdtempSync(join(tmpdir(), 'registry-empty-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('empty JSON and HCL files are no settings; the agent starts with the defaults', async () => {
  const file = join(dir, 'empty.json');
  writeFileSync(file, '');
  const configDir = join(dir, 'conf.d');
  mkdirSync(configDir);
  writeFileSync(join(configDir, 'a.json'), '  \n');
  writeFileSync(join(configDir, 'b.hcl'), '');
  const config = buildConfig({ dev: true, httpPort: 0, serverPort: 0, node: 'empty-config', configFile: [file], configDir: [configDir] });
  expect(config.datacenter).toBe('dc1');
  const agent = await Agent.start(config, { logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', false) });
  try {
    const url = `http://127.0.0.1:${agent.httpPort}`;
    await waitFor(async () => (await http(url, 'GET', '/v1/status/leader')).json !== '', 10_000);
    expect((await http(url, 'GET', '/v1/agent/self')).json.Config.NodeName).toBe('empty-config');
  } finally {
    await agent.stop();
  }
});

test('a file that is not empty is still checked', () => {
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, '{"datacenter": 5}');
  expect(() => buildConfig({ dev: true, configFile: [bad] })).toThrow(/datacenter/);
});
