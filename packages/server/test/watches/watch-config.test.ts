// The `watches` config key (issue 31): it used to be refused as an unknown key, which ended every
// start with it; now it is read, and a malformed watch is refused at start with one line naming the
// file, the watch's position and Consul 1.4's reason (agent.reloadWatches / watch.ParseExempt),
// as Consul refuses to start with it. A well-formed list — JSON or HCL — is taken as given.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig } from '@registry/server';
import { startAgentProc } from '../lifecycle/agent-process';
import { errorsOf } from '../support/config-errors';

jest.setTimeout(60_000);

const dir = mkdtempSync(join(tmpdir(), 'registry-watch-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function file(content: unknown, ext = 'json'): string {
  const path = join(dir, `config-${++n}.${ext}`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

const args = ['/bin/true'];

test('a well-formed list is read with Consul’s defaults, across files and from HCL', () => {
  const a = file({
    watches: [
      { type: 'key', key: 'cfg/x', args },
      { type: 'checks', handler: 'cat', datacenter: 'dc2', token: 't' },
      { type: 'service', service: 'web', tag: 'v1', passingonly: true, stale: true, handler_type: 'http', http_handler_config: { path: 'http://127.0.0.1:9/w' } },
    ],
  });
  const b = file(`watches = [{ type = "event", name = "deploy", handler_type = "http", http_handler_config { path = "https://h/x", method = "PUT", timeout = "3s", tls_skip_verify = true, header { x-a = ["1", "2"] } } }]\nwatch_handler_timeout = "30s"\n`, 'hcl');
  const cfg = buildConfig({ dev: true, configFile: [a, b] });
  expect(cfg.watchHandlerTimeoutMs).toBe(30_000);
  expect(cfg.watches).toEqual([
    { type: 'key', key: 'cfg/x', stale: false, passingonly: false, handler: { kind: 'args', argv: args } },
    { type: 'checks', state: 'any', datacenter: 'dc2', token: 't', stale: false, passingonly: false, handler: { kind: 'shell', command: 'cat' } },
    { type: 'service', service: 'web', tag: 'v1', passingonly: true, stale: true, handler: { kind: 'http', path: 'http://127.0.0.1:9/w', method: 'POST', header: {}, timeoutMs: 10_000, tlsSkipVerify: false } },
    { type: 'event', name: 'deploy', stale: false, passingonly: false, handler: { kind: 'http', path: 'https://h/x', method: 'PUT', header: { 'x-a': ['1', '2'] }, timeoutMs: 3_000, tlsSkipVerify: true } },
  ]);
});

test.each([
  ['an unknown type', { type: 'keys', key: 'a', args }, 'Unsupported watch type: keys'],
  ['no type', { key: 'a', args }, 'Watch type must be specified'],
  ['a connect type', { type: 'connect_roots', args }, 'Watch type connect_roots is not allowed in agent config'],
  ['a missing key', { type: 'key', args }, 'Must specify a single key to watch'],
  ['a missing prefix', { type: 'keyprefix', args }, 'Must specify a single prefix to watch'],
  ['a missing service', { type: 'service', args }, 'Must specify a single service to watch'],
  ['service and state', { type: 'checks', service: 'a', state: 'critical', args }, 'Cannot specify service and state'],
  ['a parameter the type does not take', { type: 'nodes', key: 'a', args }, 'Invalid parameters: [key]'],
  ['a wrong parameter type', { type: 'service', service: 'a', passingonly: 'yes', args }, 'Expecting passingonly to be a boolean'],
  ['both args and handler', { type: 'nodes', args, handler: 'cat' }, 'Only one watch handler allowed'],
  ['args with an HTTP handler', { type: 'nodes', args, handler_type: 'http', http_handler_config: { path: 'http://h/' } }, 'Only one watch handler allowed'],
  ['no handler', { type: 'nodes' }, 'Must define a watch handler'],
  ['args that are not strings', { type: 'nodes', args: ['a', 1] }, 'Watch args must be a list of strings'],
  ['a handler that is not a string', { type: 'nodes', handler: ['cat'] }, 'Watch handler must be a string'],
  ['an unknown handler type', { type: 'nodes', handler_type: 'grpc', args }, "Handler type 'grpc' not recognized"],
  ['an HTTP handler without its config', { type: 'nodes', handler_type: 'http' }, "Handler type 'http' requires 'http_handler_config' to be set"],
  ['an HTTP handler without a path', { type: 'nodes', handler_type: 'http', http_handler_config: { method: 'PUT' } }, "Failed to parse 'http_handler_config': Requires 'path' to be set"],
  ['an HTTP handler with a bad timeout', { type: 'nodes', handler_type: 'http', http_handler_config: { path: 'http://h/', timeout: 'soon' } }, "Failed to parse 'http_handler_config': Failed to parse timeout"],
])('%s is refused at start with one line naming the file and the watch', (_what, watch, reason) => {
  const path = file({ watches: [{ type: 'nodes', args }, watch] });
  const errors = errorsOf(() => buildConfig({ dev: true, configFile: [path] }));
  expect(errors).toHaveLength(1);
  expect(errors[0]).toContain(`${path}: watches[1]: Failed to parse watch: ${reason}`);
  expect(errors[0]).not.toContain('\n');
});

test('the agent process with a malformed watch exits 1 with the reason', async () => {
  const bad = file({ watches: [{ type: 'key', args }] });
  const refused = await startAgentProc(['-dev', '-config-file', bad], join(dir, 'bad.log'));
  expect(await Promise.race([refused.exited, new Promise((r) => setTimeout(() => r('still running'), 30_000))])).toBe(1);
  await refused.stop();
  expect(refused.log()).toContain(`${bad}: watches[0]: Failed to parse watch: Must specify a single key to watch`);
  expect(refused.log()).not.toContain('invalid config key');
});
