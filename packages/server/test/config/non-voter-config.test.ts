// -non-voter / non_voting_server (issue #14): a server that joins as a Raft learner. It must join an
// existing cluster, so it needs -retry-join and can never bootstrap one.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig } from '@registry/server';
import { errorsOf } from '../support/config-errors';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'registry-config-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('the flag and the config key make a non-voting server; servers vote by default', () => {
  expect(buildConfig({ server: true, dataDir: dir, retryJoin: ['127.0.0.1:8300'] }).nonVoter).toBe(false);
  expect(buildConfig({ server: true, nonVoter: true, dataDir: dir, retryJoin: ['127.0.0.1:8300'] }).nonVoter).toBe(true);
  const path = join(dir, 'nv.json');
  writeFileSync(path, JSON.stringify({ server: true, non_voting_server: true, data_dir: dir, retry_join: ['127.0.0.1:8300'] }));
  expect(buildConfig({ configFile: [path] }).nonVoter).toBe(true);
});

test('a non-voter that could not join, or would bootstrap, is refused with the reason', () => {
  expect(errorsOf(() => buildConfig({ server: true, nonVoter: true, dataDir: dir })).join()).toContain('needs -retry-join');
  expect(errorsOf(() => buildConfig({ server: true, nonVoter: true, bootstrapExpect: 3, dataDir: dir, retryJoin: ['127.0.0.1:8300'] })).join()).toContain('cannot bootstrap');
  expect(errorsOf(() => buildConfig({ dev: true, nonVoter: true, retryJoin: ['127.0.0.1:8300'] })).join()).toContain('cannot bootstrap');
  const path = join(dir, 'bad.json');
  writeFileSync(path, JSON.stringify({ non_voting_server: 'yes', data_dir: dir }));
  expect(errorsOf(() => buildConfig({ configFile: [path] })).join()).toContain('non_voting_server');
});
