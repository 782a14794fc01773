// The web UI's scenario from ui-browser.test.ts (Chromium) in headless Firefox (Debian's
// firefox-esr through puppeteer-core over WebDriver BiDi) against a real `registry agent -dev`
// process: a service appears live and its colour follows its check, its page shows the check, KV
// create/edit/delete, an intention created and edited, the ACL token box, the servers view.
// Controls are found as a person finds them — by their label or their text — through page-side
// helpers (puppeteer's ARIA queries need Chrome's DevTools protocol, which Firefox lacks).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { http, waitFor } from '../../server/test/support/dev-agent';
import { freePort, REPO, spawnAgent, type AgentProcess } from '../../server/test/support/processes';
import { describeInFirefox, FIREFOX } from './firefox';

jest.setTimeout(120_000);

const MANAGEMENT = '5d1c7a3e-0b2f-4e8d-9c6a-7f3e2d1b0a9c';
const LIVE_MS = 15_000;

/**
 * Page-side: the element a person would pick, marked with data-find so puppeteer can click or
 * type into it. `label` → the control of the <label> with that text; `button`/`link` → the
 * button or link whose text or aria-label is exactly that. Null until it exists.
 */
const FINDER = `(kind, text, scope) => {
  const root = scope ? document.querySelector(scope) : document;
  if (!root) return null;
  const same = (el) => (el.getAttribute('aria-label') || el.textContent || '').trim() === text;
  let el = null;
  if (kind === 'label') el = [...root.querySelectorAll('label')].find((l) => l.textContent.trim() === text)?.control ?? null;
  else el = [...root.querySelectorAll(kind === 'button' ? 'button' : 'a')].find(same) ?? null;
  if (!el || el.offsetParent === null) return null;
  const mark = String(Math.random()).slice(2);
  el.setAttribute('data-find', mark);
  return '[data-find="' + mark + '"]';
}`;

describeInFirefox('web UI in Firefox against a dev agent', () => {
  const dir = mkdtempSync(join(tmpdir(), 'registry-ui-ff-'));
  const shots = process.env.UI_SCREENSHOTS ? join(REPO, 'docs/ui') : join(dir, 'shots');
  let agent: AgentProcess;
  let browser: Browser;
  let page: Page;
  const dialogs: string[] = [];

  const inPage = <T>(expression: string) => page.evaluate(expression) as Promise<T>;
  const go = (hash: string) => inPage<string>(`location.hash = ${JSON.stringify(hash)}`);
  const css = (selector: string) => page.waitForSelector(selector, { timeout: LIVE_MS });
  const gone = (selector: string) => page.waitForSelector(selector, { hidden: true, timeout: LIVE_MS });
  const find = async (kind: 'label' | 'button' | 'link', text: string, scope = ''): Promise<string> => {
    let selector: string | null = null;
    await waitFor(async () => (selector = await inPage<string | null>(`(${FINDER})(${JSON.stringify(kind)}, ${JSON.stringify(text)}, ${JSON.stringify(scope)})`)) !== null, LIVE_MS);
    return selector!;
  };
  const heading = (text: string) =>
    waitFor(async () => (await inPage<string | null>(`document.querySelector('main h1')?.textContent ?? null`)) === text, LIVE_MS);
  const headingMatches = (re: RegExp) => waitFor(async () => re.test((await inPage<string | null>(`document.querySelector('main h1')?.textContent ?? ''`)) ?? ''), LIVE_MS);
  /** Replaces a control's text the way a person does: select all, type. */
  const fill = async (label: string, value: string) => {
    const sel = await find('label', label);
    await page.$eval(sel, (el) => ((el as unknown as { value: string }).value = ''));
    await page.type(sel, value);
  };
  const click = async (kind: 'button' | 'link', text: string, scope = '') => page.click(await find(kind, text, scope));
  const background = (selector: string) => inPage<string>(`getComputedStyle(document.querySelector(${JSON.stringify(selector)})).backgroundColor`);
  const shot = async (name: string) => {
    mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: join(shots, `${name}.png`) as `${string}.png` });
  };

  beforeAll(async () => {
    const config = join(dir, 'acl.json');
    writeFileSync(config, JSON.stringify({ acl: { enabled: true, default_policy: 'allow', tokens: { initial_management: MANAGEMENT } } }));
    agent = spawnAgent(['-dev', '-node', 'ff-node', '-dns-port', '-1', '-config-file', config], await freePort(), await freePort(), join(dir, 'agent.log'));
    await waitFor(async () => (await (await fetch(`${agent.url}/v1/status/leader`)).json()) !== '', 30_000, 100);
    await waitFor(async () => (await http(agent.url, 'GET', '/v1/catalog/node/ff-node')).json !== null, 30_000, 100);
    browser = await puppeteer.launch({ browser: 'firefox', executablePath: FIREFOX!, headless: true, protocol: 'webDriverBiDi', userDataDir: join(dir, 'profile') });
    page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 760 });
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

  test('/ redirects to /ui/, which opens on the services of the agent datacenter', async () => {
    await page.goto(`${agent.url}/`);
    await waitFor(() => /\/ui\/#\/dc1\/services$/.test(page.url()), LIVE_MS);
    await heading('Services');
    await css('tr[data-service="registry"]');
    expect(await inPage('navigator.userAgent')).toMatch(/Firefox\/\d+/);
  });

  test('a service registered over HTTP appears without a reload, and its colour follows its check', async () => {
    await inPage('window.notReloaded = true');
    const reg = await http(agent.url, 'PUT', '/v1/agent/service/register', {
      Name: 'web',
      ID: 'web-1',
      Port: 8080,
      Check: { CheckID: 'web-ttl', Name: 'web heartbeat', TTL: '10m', Status: 'passing' },
    });
    expect(reg.status).toBe(200);
    const badge = 'tr[data-service="web"] .badge';
    await css(`${badge}[data-health="passing"]`);
    const green = await background(badge);
    await shot('firefox-services');
    expect((await http(agent.url, 'PUT', '/v1/agent/check/fail/web-ttl?note=disk+full')).status).toBe(200);
    await css(`${badge}[data-health="critical"]`);
    const red = await background(badge);
    expect(red).not.toBe(green);
    expect(red).toBe('rgb(179, 38, 30)');
    expect(await inPage('window.notReloaded')).toBe(true);
  });

  test("a service's page shows its instance and check, and follows the check live", async () => {
    await click('link', 'web', 'main');
    await heading('Service web');
    const check = 'section[data-instance="web-1"] tr[data-check="web-ttl"]';
    await css(`${check} [data-health="critical"]`);
    expect(await page.$eval(check, (el) => el.textContent)).toContain('disk full');
    await http(agent.url, 'PUT', '/v1/agent/check/pass/web-ttl');
    await css(`${check} [data-health="passing"]`);
  });

  test('keyboard navigation moves focus to the new heading', async () => {
    await page.focus(await find('link', 'Nodes', 'nav[aria-label="Main"]'));
    await page.keyboard.press('Enter');
    await heading('Nodes');
    expect(await inPage('document.activeElement.id')).toBe('view-title');
    await css('tr[data-node="ff-node"] .badge');
  });

  test('a KV key is created, edited and deleted through the UI', async () => {
    await go('#/dc1/kv/');
    await heading('Key/Value');
    await fill('Key or folder name', 'app/config');
    await fill('Value', 'max_conns = 10');
    await click('button', 'Create');
    await heading('Key app/config');
    expect((await http(agent.url, 'GET', '/v1/kv/app/config?raw')).text).toBe('max_conns = 10');

    await fill('Value', 'max_conns = 20');
    await click('button', 'Save');
    await waitFor(async () => (await http(agent.url, 'GET', '/v1/kv/app/config?raw')).text === 'max_conns = 20', LIVE_MS);

    await click('link', 'app', 'nav[aria-label="Folders"]');
    await css('tr[data-key="app/config"]');
    await http(agent.url, 'PUT', '/v1/kv/app/db/url', 'postgres://db:5432');
    await css('tr[data-key="app/db/"]');

    await click('button', 'Delete app/config');
    await gone('tr[data-key="app/config"]');
    expect(dialogs.at(-1)).toBe('Delete the key app/config?');
    expect((await http(agent.url, 'GET', '/v1/kv/app/config')).status).toBe(404);
    expect((await http(agent.url, 'GET', '/v1/kv/app/db/url?raw')).text).toBe('postgres://db:5432');
  });

  test('an intention is created and edited through the UI', async () => {
    await go('#/dc1/intentions');
    await heading('Intentions');
    await fill('Source service', 'web');
    await fill('Destination service', 'db');
    await page.select(await find('label', 'Action'), 'deny');
    await fill('Description', 'web must not reach db directly');
    await click('button', 'Create');
    await css('tr[data-intention]');
    const list = await http(agent.url, 'GET', '/v1/connect/intentions');
    expect(list.json).toHaveLength(1);
    expect(list.json[0]).toMatchObject({ SourceName: 'web', DestinationName: 'db', Action: 'deny', Description: 'web must not reach db directly' });

    await click('link', 'Edit web → db');
    await heading('Edit intention');
    await page.select(await find('label', 'Action'), 'allow');
    await click('button', 'Save');
    await heading('Intentions');
    await waitFor(async () => (await http(agent.url, 'GET', '/v1/connect/intentions')).json[0].Action === 'allow', LIVE_MS);
  });

  test('ACL lists need the token typed into the token box, kept in localStorage and sent', async () => {
    await go('#/dc1/acl/tokens');
    await heading('ACL tokens');
    await waitFor(async () => (await inPage<string>(`[...document.querySelectorAll('[role="alert"]:not([hidden])')].map((e) => e.textContent).join(' ')`)).includes('403'), LIVE_MS);
    await fill('ACL token', MANAGEMENT);
    await click('button', 'Save token');
    expect(await inPage("localStorage.getItem('registry.token')")).toBe(MANAGEMENT);
    await css('tr[data-token]');

    await go('#/dc1/acl/policies');
    await heading('ACL policies');
    await fill('Name', 'kv-app');
    await fill('Rules', 'key_prefix "app/" { policy = "write" }');
    await click('button', 'Create');
    await heading('ACL policy');
    // The heading is drawn at once, the policy when its read answers.
    await css('pre.rules');
    expect(await page.$eval('pre.rules', (el) => el.textContent)).toContain('key_prefix "app/"');
    const policies = await http(agent.url, 'GET', '/v1/acl/policies', undefined, { 'X-Registry-Token': MANAGEMENT });
    expect(policies.json.map((p: { Name: string }) => p.Name)).toContain('kv-app');

    // Kept across a reload, then forgotten.
    await page.reload();
    await go('#/dc1/acl/tokens');
    await css('tr[data-token]');
    await click('button', 'Clear');
    expect(await inPage("localStorage.getItem('registry.token')")).toBeNull();
  });

  test('the servers view shows the leader and the Raft index', async () => {
    await go('#/dc1/servers');
    await heading('Servers');
    await css('tr[data-server="ff-node"]');
    expect(await page.$eval('tr[data-server="ff-node"]', (el) => el.textContent)).toContain('leader');
    const leader = await http(agent.url, 'GET', '/v1/status/leader');
    await waitFor(async () => (await page.$eval('[data-field="leader"]', (el) => el.textContent)) === leader.json, LIVE_MS);
    expect(Number(await page.$eval('[data-field="raft-index"]', (el) => el.textContent))).toBeGreaterThan(0);
    await headingMatches(/^Servers$/);
  });
});
