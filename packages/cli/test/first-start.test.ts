// A first start that reads well (issue #29): `registry agent -dev` prints Consul's banner with the
// facts an operator checks first, the web UI's address among them, and no warning that does not
// apply (a -dev server bootstraps itself; its own start is no event-loop stall). `registry
// version` and `--help` say what registry is, not what Consul's gossip is.
import { cli, spawnCli } from './support/cli';
import { freePorts } from '../../server/test/support/ports';

jest.setTimeout(60_000);

test('-dev prints the banner, with the UI address that answers, and no warning', async () => {
  const [http, dns, server] = await freePorts(3);
  const agent = spawnCli(['agent', '-dev', '-node', 'first-start', '-http-port', String(http), '-dns-port', String(dns), '-server-port', String(server)]);
  try {
    const deadline = Date.now() + 45_000;
    while (!agent.output().includes('cluster leader known') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const out = agent.output();
    expect(out).toContain('==> Registry agent running!');
    expect(out).toMatch(/Node name: 'first-start'/);
    expect(out).toMatch(/Datacenter: 'dc1'/);
    expect(out).toMatch(/Server: true \(Bootstrap: true/);
    expect(out).toContain(`Client Addr: [127.0.0.1] (HTTP: ${http}, HTTPS: -1, DNS: ${dns})`);
    expect(out).toContain(`Cluster Addr: 127.0.0.1 (Server: ${server})`);
    const ui = /Web UI: (\S+)/.exec(out)?.[1];
    expect(ui).toBe(`http://127.0.0.1:${http}/ui/`);
    const page = await fetch(ui!);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    await page.text();
    // Nothing the operator should worry about: a -dev server neither waits for a leader nor stalls.
    expect(out.split('\n').filter((l) => l.includes('[WARN]'))).toEqual([]);
  } finally {
    agent.kill('SIGTERM');
    await agent.exited;
  }
});

test('`registry version` names the API registry implements; `--help` describes both agent kinds', async () => {
  const version = await cli(['version']);
  expect(version.code).toBe(0);
  const lines = version.stdout.trim().split('\n');
  expect(lines[0]).toMatch(/^Registry v\d+\.\d+\.\d+/);
  expect(lines[1]).toBe('Consul 1.4.5 HTTP API (X-Consul-* headers and Consul tools with http_config.consul_compat)');
  expect(version.stdout).not.toMatch(/Protocol 2 spoken/);
  const help = await cli(['--help']);
  // Commander wraps the description at 80 columns: compare with the whitespace folded.
  expect(help.stdout.replace(/\s+/g, ' ')).toContain('agent run a registry agent (a server with -server, else a client agent)');
});
