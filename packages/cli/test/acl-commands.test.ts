// `registry acl …` against a dev agent with ACLs on (default deny, not yet bootstrapped).
import { startDevAgent, type TestAgent } from '../../server/test/support/dev-agent';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli } from './support/cli';

let t: TestAgent;
let addr: string;
beforeAll(async () => {
  t = await startDevAgent((c) => {
    c.acl.enabled = true;
    c.acl.defaultPolicy = 'deny';
  });
  addr = `127.0.0.1:${t.agent.httpPort}`;
});
afterAll(async () => {
  await t.stop();
});

test('bootstrap, then policies and tokens through their whole life', async () => {
  const boot = await cli(['acl', 'bootstrap', '-http-addr', addr]);
  expect(boot.code).toBe(0);
  expect(boot.stdout).toMatch(/^Description:\s+Bootstrap Token \(Global Management\)$/m);
  expect(boot.stdout).toMatch(/^ {3}00000000-0000-0000-0000-000000000001 - global-management$/m);
  const secret = /^SecretID:\s+(\S+)$/m.exec(boot.stdout)![1];
  expect((await cli(['acl', 'bootstrap', '-http-addr', addr])).code).toBe(1);

  // The token from a file, as -token-file / REGISTRY_HTTP_TOKEN_FILE.
  const dir = mkdtempSync(join(tmpdir(), 'acl-cli-'));
  writeFileSync(join(dir, 'token'), `${secret}\n`);
  writeFileSync(join(dir, 'rules.hcl'), 'key_prefix "app/" { policy = "write" }\n');
  const env = { REGISTRY_HTTP_ADDR: addr, REGISTRY_HTTP_TOKEN_FILE: join(dir, 'token') };
  const acl = (...args: string[]) => cli(['acl', ...args], { env });

  const created = await acl('policy', 'create', '-name', 'app-write', '-description', 'app keys', '-rules', `@${join(dir, 'rules.hcl')}`);
  expect(created.code).toBe(0);
  expect(created.stdout).toMatch(/^Name:\s+app-write$/m);
  const policyId = /^ID:\s+(\S+)$/m.exec(created.stdout)![1];
  expect((await acl('policy', 'read', '-name', 'app-write')).stdout).toMatch(/key_prefix "app\/"/);
  expect((await acl('policy', 'read', '-id', policyId.slice(0, 8))).stdout).toMatch(/^Description:\s+app keys$/m);
  expect((await acl('policy', 'update', '-id', policyId, '-description', 'changed')).stdout).toMatch(/^Description:\s+changed$/m);
  expect((await acl('policy', 'list')).stdout).toMatch(/^app-write:\n {3}ID:\s+\S+\n {3}Description:\s+changed$/m);
  expect(JSON.parse((await acl('policy', 'list', '-format=json')).stdout).map((p: { Name: string }) => p.Name)).toContain('app-write');

  const tok = await acl('token', 'create', '-description', 'app', '-policy-name', 'app-write');
  expect(tok.stdout).toMatch(/^ {3}\S+ - app-write$/m);
  const accessor = /^AccessorID:\s+(\S+)$/m.exec(tok.stdout)![1];
  const appSecret = /^SecretID:\s+(\S+)$/m.exec(tok.stdout)![1];
  // The new token writes under app/ and nowhere else.
  expect((await cli(['kv', 'put', '-token', appSecret, '-http-addr', addr, 'app/x', '1'])).code).toBe(0);
  expect(await cli(['kv', 'put', '-token', appSecret, '-http-addr', addr, 'other/x', '1'])).toMatchObject({ code: 1, stderr: expect.stringMatching(/403/) });

  expect((await acl('token', 'read', '-id', accessor.slice(0, 10))).stdout).toMatch(/^Description:\s+app$/m);
  const updated = await acl('token', 'update', '-id', accessor, '-description', 'app v2', '-merge-policies');
  expect(updated.stdout).toMatch(/^Token updated successfully\.\n/);
  expect(updated.stdout).toMatch(/ - app-write$/m);
  const cloned = await acl('token', 'clone', '-id', accessor, '-description', 'copy');
  expect(cloned.stdout).toMatch(/^Token cloned successfully\.\n/);
  expect((await acl('token', 'list')).stdout).toMatch(/^Description:\s+copy$/m);
  expect(await acl('token', 'delete', '-id', accessor)).toMatchObject({ code: 0, stdout: `Token "${accessor}" deleted successfully\n` });
  expect(await acl('policy', 'delete', '-name', 'app-write')).toMatchObject({ code: 0, stdout: `Policy "${policyId}" deleted successfully\n` });
  expect(await acl('policy', 'read', '-name', 'app-write')).toMatchObject({ code: 1, stderr: expect.stringMatching(/No such policy/) });
});
