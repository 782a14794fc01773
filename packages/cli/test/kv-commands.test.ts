// `registry kv …` against a real dev agent: Consul's messages, flags, exit codes and data sources.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevAgent, type TestAgent } from '../../server/test/support/dev-agent';
import { cli } from './support/cli';

let t: TestAgent;
let env: Record<string, string>;
beforeAll(async () => {
  t = await startDevAgent();
  env = { REGISTRY_HTTP_ADDR: `127.0.0.1:${t.agent.httpPort}` };
});
afterAll(async () => {
  await t.stop();
});

const kv = (args: string[], input?: string) => cli(['kv', ...args], { env, input });

test('put then get prints the value; a missing key is exit 1 with Consul\'s message', async () => {
  expect(await kv(['put', 'app/name', 'registry'])).toMatchObject({ code: 0, stdout: 'Success! Data written to: app/name\n' });
  expect(await kv(['get', 'app/name'])).toMatchObject({ code: 0, stdout: 'registry\n' });
  expect(await kv(['get', 'app/none'])).toMatchObject({ code: 1, stderr: 'Error! No key exists at: app/none\n' });
  expect(await kv(['get'])).toMatchObject({ code: 1, stderr: expect.stringMatching(/Missing KEY argument/) });
});

test('values come from @file, from stdin with -, and from base64 with -base64', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kv-cli-'));
  writeFileSync(join(dir, 'v.txt'), 'from a file');
  await kv(['put', 'src/file', `@${join(dir, 'v.txt')}`]);
  await kv(['put', 'src/stdin', '-'], 'from stdin');
  await kv(['put', '-base64', 'src/b64', Buffer.from('decoded').toString('base64')]);
  expect((await kv(['get', 'src/file'])).stdout).toBe('from a file\n');
  expect((await kv(['get', 'src/stdin'])).stdout).toBe('from stdin\n');
  expect((await kv(['get', 'src/b64'])).stdout).toBe('decoded\n');
  expect((await kv(['get', '-base64', 'src/b64'])).stdout).toBe(`${Buffer.from('decoded').toString('base64')}\n`);
});

test('-detailed, -recurse and -keys', async () => {
  await kv(['put', '-flags=42', 'tree/a', 'one']);
  await kv(['put', 'tree/sub/b', 'two']);
  const detailed = (await kv(['get', '-detailed', 'tree/a'])).stdout;
  expect(detailed).toMatch(/^CreateIndex {6}\d+$/m);
  expect(detailed).toMatch(/^Flags {12}42$/m);
  expect(detailed).toMatch(/^Session {10}-$/m);
  expect(detailed).toMatch(/^Value {12}one$/m);
  expect((await kv(['get', '-recurse', 'tree'])).stdout).toBe('tree/a:one\ntree/sub/b:two\n');
  expect((await kv(['get', '-keys', 'tree/'])).stdout).toBe('tree/a\ntree/sub/\n');
});

test('-cas writes and deletes only at the given modify index', async () => {
  await kv(['put', 'cas/k', 'v1']);
  const index = /ModifyIndex\s+(\d+)/.exec((await kv(['get', '-detailed', 'cas/k'])).stdout)![1];
  expect(await kv(['put', '-cas', '-modify-index=1', 'cas/k', 'v2'])).toMatchObject({ code: 1, stderr: 'Error! Did not write to cas/k: CAS failed\n' });
  expect(await kv(['put', '-cas', `-modify-index=${index}`, 'cas/k', 'v2'])).toMatchObject({ code: 0 });
  expect(await kv(['delete', '-cas', '-modify-index=1', 'cas/k'])).toMatchObject({ code: 1, stderr: 'Error! Did not delete key cas/k: CAS failed\n' });
  expect(await kv(['delete', '-cas', '-recurse', 'cas/k'])).toMatchObject({ code: 1, stderr: 'Cannot specify both -cas and -recurse!\n' });
  expect((await kv(['get', 'cas/k'])).stdout).toBe('v2\n');
});

test('delete removes a key, and -recurse a whole prefix', async () => {
  await kv(['put', 'del/a', '1']);
  await kv(['put', 'del/b', '2']);
  expect(await kv(['delete', 'del/a'])).toMatchObject({ code: 0, stdout: 'Success! Deleted key: del/a\n' });
  expect((await kv(['get', 'del/a'])).code).toBe(1);
  expect(await kv(['delete', '-recurse', 'del/'])).toMatchObject({ code: 0, stdout: 'Success! Deleted keys with prefix: del/\n' });
  expect((await kv(['get', '-recurse', 'del/'])).stdout).toBe('');
});

test('export writes Consul\'s JSON and import (from stdin, with -prefix) restores it', async () => {
  await kv(['put', '-flags=7', 'exp/x', 'ex']);
  await kv(['put', 'exp/y', 'why']);
  const exported = (await kv(['export', 'exp/'])).stdout;
  expect(JSON.parse(exported)).toEqual([
    { key: 'exp/x', flags: 7, value: Buffer.from('ex').toString('base64') },
    { key: 'exp/y', flags: 0, value: Buffer.from('why').toString('base64') },
  ]);
  expect(exported).toContain('\n\t{');
  const imported = await kv(['import', '-prefix=copy/', '-'], exported);
  expect(imported).toMatchObject({ code: 0, stdout: 'Imported: copy/exp/x\nImported: copy/exp/y\n' });
  expect((await kv(['get', '-detailed', 'copy/exp/x'])).stdout).toMatch(/^Flags {12}7$/m);
  expect(await kv(['import', 'not json'])).toMatchObject({ code: 1, stderr: expect.stringMatching(/Cannot unmarshal data/) });
});

test('an unreachable agent names the address and the cause', async () => {
  const r = await cli(['kv', 'get', 'k'], { env: { REGISTRY_HTTP_ADDR: '127.0.0.1:1' } });
  expect(r).toMatchObject({ code: 1, stderr: 'Error querying Registry agent: connection refused 127.0.0.1:1\n' });
});
