// The web UI in a real headless Chromium against a real `registry agent -dev` process: what a
// person sees, live (blocking queries, no reload), and what the UI's forms change on the agent.
// UI_SCREENSHOTS=1 writes the screenshots into docs/ui/ (the README shows one); otherwise they
// go to a temporary folder, so ordinary runs leave the tree alone.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { http, waitFor } from '../../server/test/support/dev-agent';
import { freePort, REPO, spawnAgent, type AgentProcess } from '../../server/test/support/processes';
import { CHROMIUM, CHROMIUM_ARGS, describeInBrowser } from './chromium';

jest.setTimeout(120_000);

const MANAGEMENT = 'b4f0d9e2-52a8-4c1b-9f3e-4a7d1c2b3e4f';
const LIVE_MS = 15_000;

describeInBrowser('web UI in Chromium against a dev agent', () => {
  const dir = mkdtempSync(join(tmpdir(), 'registry-ui-'));
  const shots = process.env.UI_SCREENSHOTS ? join(REPO, 'docs/ui') : join(dir, 'shots');
  let agent: AgentProcess;
  let browser: Browser;
  let page: Page;
  const dialogs: string[] = [];
  const cspConsole: string[] = [];

  const shot = async (name: string) => {
    mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: join(shots, `${name}.png`) });
  };
  // Page-side code is passed as text: this test program has no DOM types (tsconfig.jest.json).
  const inPage = <T>(expression: string) => page.evaluate<T>(expression);
  const go = (hash: string) => inPage<string>(`location.hash = ${JSON.stringify(hash)}`);
  const background = (selector: string) => inPage<string>(`getComputedStyle(document.querySelector(${JSON.stringify(selector)})).backgroundColor`);

  beforeAll(async () => {
    const config = join(dir, 'acl.json');
    // ACLs on with default allow: every view works anonymously except the ACL lists, which need
    // the token typed into the token box.
    writeFileSync(config, JSON.stringify({ acl: { enabled: true, default_policy: 'allow', tokens: { initial_management: MANAGEMENT } } }));
    agent = spawnAgent(['-dev', '-node', 'ui-node', '-dns-port', '-1', '-config-file', config], await freePort(), await freePort(), join(dir, 'agent.log'));
    await waitFor(async () => (await (await fetch(`${agent.url}/v1/status/leader`)).json()) !== '', 30_000, 100);
    await waitFor(async () => (await http(agent.url, 'GET', '/v1/catalog/node/ui-node')).json !== null, 30_000, 100);
    browser = await chromium.launch({ executablePath: CHROMIUM!, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 760 } });
    // Every Content-Security-Policy violation of every document the page loads (the UI's headers
    // must not break it), from the page's own event and from the console.
    await page.addInitScript(
      "window.cspViolations = []; document.addEventListener('securitypolicyviolation', (e) => window.cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));",
    );
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) cspConsole.push(m.text());
    });
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.accept();
    });
  });

  afterAll(async () => {
    await browser?.close();
    if (agent && agent.child.exitCode === null) {
      agent.child.kill('SIGTERM');
      await agent.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  test('/ redirects to /ui/, which opens on the agent datacenter services', async () => {
    const res = await fetch(`${agent.url}/`, { redirect: 'manual' });
    expect(res.status).toBe(301);
    expect(res.headers.get('location')).toBe('/ui/');
    await page.goto(`${agent.url}/`);
    await page.waitForURL(/\/ui\/#\/dc1\/services$/, { timeout: LIVE_MS });
    await page.getByRole('heading', { level: 1, name: 'Services' }).waitFor({ timeout: LIVE_MS });
    // The servers' own service is listed from the start.
    await page.locator('tr[data-service="registry"]').waitFor({ timeout: LIVE_MS });
  });

  test('a service registered over HTTP appears without a reload, and its colour follows its check', async () => {
    await inPage('window.notReloaded = true');
    const reg = await http(agent.url, 'PUT', '/v1/agent/service/register', {
      Name: 'web',
      ID: 'web-1',
      Port: 8080,
      Tags: ['v1'],
      Check: { CheckID: 'web-ttl', Name: 'web heartbeat', TTL: '10m', Status: 'passing' },
    });
    expect(reg.status).toBe(200);
    const badge = 'tr[data-service="web"] .badge';
    await page.locator(`${badge}[data-health="passing"]`).waitFor({ timeout: LIVE_MS });
    const green = await background(badge);
    await shot('services');

    expect((await http(agent.url, 'PUT', '/v1/agent/check/fail/web-ttl?note=disk+full')).status).toBe(200);
    await page.locator(`${badge}[data-health="critical"]`).waitFor({ timeout: LIVE_MS });
    const red = await background(badge);
    expect(red).not.toBe(green);
    expect(red).toBe('rgb(179, 38, 30)');
    expect(await inPage('window.notReloaded')).toBe(true);
  });

  test("a service's page shows its instances and their checks", async () => {
    await page.getByRole('link', { name: 'web', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Service web' }).waitFor({ timeout: LIVE_MS });
    const check = page.locator('section[data-instance="web-1"] tr[data-check="web-ttl"]');
    await check.locator('[data-health="critical"]').waitFor({ timeout: LIVE_MS });
    expect(await check.textContent()).toContain('disk full');
    // Live here too: the check passes again and the page follows.
    await http(agent.url, 'PUT', '/v1/agent/check/pass/web-ttl');
    await check.locator('[data-health="passing"]').waitFor({ timeout: LIVE_MS });
    await shot('service');
  });

  test("leaving a view aborts its blocking queries", async () => {
    // Wait until the list's long poll (one carrying ?index=) is in flight, then leave.
    const blocking = page.waitForRequest((r) => r.url().includes('/v1/catalog/services?') && r.url().includes('index='), { timeout: LIVE_MS });
    await go('#/dc1/services');
    await page.locator('tr[data-service="web"]').waitFor({ timeout: LIVE_MS });
    await blocking;
    const aborted = page.waitForEvent('requestfailed', { predicate: (r) => r.url().includes('/v1/catalog/services?'), timeout: LIVE_MS });
    // By keyboard: the main navigation is a list of links; focus lands on the new heading.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Nodes' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Nodes' }).waitFor({ timeout: LIVE_MS });
    expect(await inPage('document.activeElement.id')).toBe('view-title');
    await aborted;
    await page.locator('tr[data-node="ui-node"] .badge').waitFor({ timeout: LIVE_MS });
    await shot('nodes');
  });

  test('a KV key is created, edited and deleted through the UI', async () => {
    await go('#/dc1/kv/');
    await page.getByRole('heading', { level: 1, name: 'Key/Value' }).waitFor({ timeout: LIVE_MS });
    await page.getByLabel('Key or folder name').fill('app/config');
    await page.getByLabel('Value', { exact: true }).fill('max_conns = 10');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Key app/config' }).waitFor({ timeout: LIVE_MS });
    const created = await http(agent.url, 'GET', '/v1/kv/app/config?raw');
    expect(created.text).toBe('max_conns = 10');

    await page.getByLabel('Value', { exact: true }).fill('max_conns = 20');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await waitFor(async () => (await http(agent.url, 'GET', '/v1/kv/app/config?raw')).text === 'max_conns = 20', LIVE_MS);

    // The folder lists it; a key written elsewhere shows up live.
    await page.getByRole('navigation', { name: 'Folders' }).getByRole('link', { name: 'app' }).click();
    await page.locator('tr[data-key="app/config"]').waitFor({ timeout: LIVE_MS });
    await http(agent.url, 'PUT', '/v1/kv/app/db/url', 'postgres://db:5432');
    await page.locator('tr[data-key="app/db/"]').waitFor({ timeout: LIVE_MS });
    await shot('kv');

    await page.getByRole('button', { name: 'Delete app/config' }).click();
    await page.locator('tr[data-key="app/config"]').waitFor({ state: 'detached', timeout: LIVE_MS });
    expect(dialogs.at(-1)).toBe('Delete the key app/config?');
    expect((await http(agent.url, 'GET', '/v1/kv/app/config')).status).toBe(404);
    expect((await http(agent.url, 'GET', '/v1/kv/app/db/url?raw')).text).toBe('postgres://db:5432');
  });

  test('an intention is created and edited through the UI', async () => {
    await go('#/dc1/intentions');
    await page.getByRole('heading', { level: 1, name: 'Intentions' }).waitFor({ timeout: LIVE_MS });
    await page.getByLabel('Source service').fill('web');
    await page.getByLabel('Destination service').fill('db');
    await page.getByLabel('Action').selectOption('deny');
    await page.getByLabel('Description').fill('web must not reach db directly');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    const row = page.locator('tr[data-intention]', { hasText: 'web must not reach db directly' });
    await row.waitFor({ timeout: LIVE_MS });
    const list = await http(agent.url, 'GET', '/v1/connect/intentions');
    expect(list.json).toHaveLength(1);
    expect(list.json[0]).toMatchObject({ SourceName: 'web', DestinationName: 'db', Action: 'deny', Description: 'web must not reach db directly' });
    await shot('intentions');

    await row.getByRole('link', { name: 'Edit web → db' }).click();
    await page.getByRole('heading', { level: 1, name: 'Edit intention' }).waitFor({ timeout: LIVE_MS });
    await page.getByLabel('Action').selectOption('allow');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Intentions' }).waitFor({ timeout: LIVE_MS });
    await waitFor(async () => (await http(agent.url, 'GET', '/v1/connect/intentions')).json[0].Action === 'allow', LIVE_MS);
  });

  test('ACL lists need the token typed into the token box, which is kept in localStorage and sent', async () => {
    await go('#/dc1/acl/tokens');
    await page.getByRole('heading', { level: 1, name: 'ACL tokens' }).waitFor({ timeout: LIVE_MS });
    // Anonymous may not read ACLs: the agent's reason is shown.
    await page.locator('[role="alert"]:not([hidden])', { hasText: '403' }).first().waitFor({ timeout: LIVE_MS });
    await page.getByLabel('ACL token', { exact: true }).fill(MANAGEMENT);
    // Armed before the click: saving the token re-reads the list at once, and a waiter set up after
    // it could miss that request (the next one is a blocking query that waits for a change).
    const sent = page.waitForRequest((r) => r.url().includes('/v1/acl/tokens') && r.headers()['x-registry-token'] === MANAGEMENT, { timeout: LIVE_MS });
    await page.getByRole('button', { name: 'Save token' }).click();
    expect(await inPage("localStorage.getItem('registry.token')")).toBe(MANAGEMENT);
    await page.locator('tr[data-token]').first().waitFor({ timeout: LIVE_MS });
    await sent;

    // A policy created through the UI, then a token that uses it.
    await go('#/dc1/acl/policies');
    await page.getByRole('heading', { level: 1, name: 'ACL policies' }).waitFor({ timeout: LIVE_MS });
    await page.getByLabel('Name').fill('kv-app');
    await page.getByLabel('Rules').fill('key_prefix "app/" { policy = "write" }');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'ACL policy' }).waitFor({ timeout: LIVE_MS });
    expect(await page.locator('pre.rules').textContent()).toContain('key_prefix "app/"');
    await go('#/dc1/acl/tokens');
    await page.getByLabel('Description').fill('app deployer');
    await page.getByLabel('Policies').fill('kv-app');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: /^Token / }).waitFor({ timeout: LIVE_MS });
    const tokens = await http(agent.url, 'GET', '/v1/acl/tokens', undefined, { 'X-Registry-Token': MANAGEMENT });
    const made = tokens.json.find((t: { Description: string }) => t.Description === 'app deployer');
    expect(made.Policies.map((p: { Name: string }) => p.Name)).toEqual(['kv-app']);
    await go('#/dc1/acl/tokens');
    await page.locator(`tr[data-token="${made.AccessorID}"]`).waitFor({ timeout: LIVE_MS });
    await shot('acl-tokens');

    // The token survives a reload (it is in localStorage), then is cleared.
    await page.reload();
    await page.locator(`tr[data-token="${made.AccessorID}"]`).waitFor({ timeout: LIVE_MS });
    await page.getByRole('button', { name: 'Clear' }).click();
    expect(await inPage("localStorage.getItem('registry.token')")).toBeNull();
  });

  test('the servers view shows the Raft configuration, the leader and the indexes', async () => {
    await go('#/dc1/servers');
    await page.getByRole('heading', { level: 1, name: 'Servers' }).waitFor({ timeout: LIVE_MS });
    const row = page.locator('tr[data-server="ui-node"]');
    await row.waitFor({ timeout: LIVE_MS });
    expect(await row.textContent()).toContain('leader');
    const leader = await http(agent.url, 'GET', '/v1/status/leader');
    expect(await page.locator('[data-field="leader"]').textContent()).toBe(leader.json);
    expect(Number(await page.locator('[data-field="raft-index"]').textContent())).toBeGreaterThan(0);
    expect(Number(await page.locator('[data-field="registry-index"]').textContent())).toBeGreaterThan(0);
    await shot('servers');
  });

  test('the datacenter picker lists the catalog datacenters and keeps the view', async () => {
    const picker = page.getByLabel('Datacenter');
    expect(await picker.locator('option').allTextContents()).toEqual(['dc1']);
    expect(await picker.inputValue()).toBe('dc1');
  });

  test('the UI is served with its security headers and ran under them with no CSP violation', async () => {
    const res = await fetch(`${agent.url}/ui/`);
    await res.text();
    expect(res.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    // The console heard every document of the tests above; then a fresh load of the UI.
    expect(cspConsole).toEqual([]);
    await page.goto('about:blank');
    await page.goto(`${agent.url}/ui/#/dc1/services`);
    await page.getByRole('heading', { level: 1, name: 'Services' }).waitFor({ timeout: LIVE_MS });
    await page.locator('tr[data-service="registry"]').waitFor({ timeout: LIVE_MS });
    expect(await inPage<string[]>('window.cspViolations')).toEqual([]);
    expect(cspConsole).toEqual([]);
    // The policy is in force (and the listener hears it): an inline script is refused.
    await inPage("(() => { const s = document.createElement('script'); s.textContent = 'window.inlineRan = true'; document.head.append(s); })()");
    await waitFor(async () => (await inPage<string[]>('window.cspViolations')).length > 0, 5_000);
    expect(await inPage<boolean | undefined>('window.inlineRan')).toBeUndefined();
    expect((await inPage<string[]>('window.cspViolations'))[0]).toMatch(/^script-src/);
  });
});
