// What a new user meets first in the web UI (issue #29), in a real headless Chromium against a
// `registry agent -dev` with ACLs off, its default: the ACL page says ACLs are off instead of an
// error above a form that cannot work and a "Loading…" that never ends; a node name with hyphens
// stays on one line; the Servers page labels its values in words, not with a header's name.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { http, waitFor } from '../../server/test/support/dev-agent';
import { freePort, spawnAgent, type AgentProcess } from '../../server/test/support/processes';
import { CHROMIUM, CHROMIUM_ARGS, describeInBrowser } from './chromium';

jest.setTimeout(120_000);

const LIVE_MS = 15_000;

describeInBrowser('web UI, first look (ACLs off)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'registry-ui-first-'));
  let agent: AgentProcess;
  let browser: Browser;
  let page: Page;
  const go = (hash: string) => page.evaluate(`location.hash = ${JSON.stringify(hash)}`);

  beforeAll(async () => {
    agent = spawnAgent(['-dev', '-node', 'ui-first', '-dns-port', '-1'], await freePort(), await freePort(), join(dir, 'agent.log'));
    await waitFor(async () => (await (await fetch(`${agent.url}/v1/status/leader`)).json()) !== '', 30_000, 100);
    browser = await chromium.launch({ executablePath: CHROMIUM!, args: CHROMIUM_ARGS });
    // Narrow enough that a table's name column has to choose between wrapping and widening.
    page = await browser.newPage({ viewport: { width: 400, height: 700 } });
    await page.goto(`${agent.url}/ui/`);
  });

  afterAll(async () => {
    await browser?.close();
    if (agent && agent.child.exitCode === null) {
      agent.child.kill('SIGTERM');
      await agent.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  test.each(['#/dc1/acl/tokens', '#/dc1/acl/policies', '#/dc1/acl/tokens/00000000-0000-4000-8000-000000000001', '#/dc1/acl/policies/00000000-0000-4000-8000-000000000002'])(
    '%s says ACLs are off, with no error, no form and nothing left loading',
    async (hash) => {
      await go(hash);
      await page.getByRole('heading', { level: 1, name: 'ACLs are disabled' }).waitFor({ timeout: LIVE_MS });
      await expect(page.locator('[data-acl="disabled"]').textContent()).resolves.toContain('acl.enabled = false');
      // Give a watch that kept going the time to draw over the notice: nothing does.
      await page.waitForTimeout(1500);
      expect(await page.locator('main form').count()).toBe(0);
      expect(await page.locator('[aria-busy="true"]').count()).toBe(0);
      expect(await page.locator('main').textContent()).not.toMatch(/401|Loading…/);
    },
  );

  test('a node name with hyphens stays on one line', async () => {
    const name = 'web-frontend-01-eu-west-1a-prod';
    expect((await http(agent.url, 'PUT', '/v1/catalog/register', { Node: name, Address: '10.1.2.3' })).status).toBe(200);
    await go('#/dc1/nodes');
    const cell = page.locator(`tr[data-node="${name}"] th`);
    await cell.waitFor({ timeout: LIVE_MS });
    // One line box: the cell's text occupies exactly one client rect.
    // (Page-side code as text: this test program has no DOM types, tsconfig.jest.json.)
    const lines = await page.evaluate<number>(
      `(() => { const r = document.createRange(); r.selectNodeContents(document.querySelector('tr[data-node="${name}"] th')); return new Set([...r.getClientRects()].map((c) => Math.round(c.top))).size; })()`,
    );
    expect(lines).toBe(1);
  });

  test('the Servers page names its values in words', async () => {
    await go('#/dc1/servers');
    await page.locator('[data-field="registry-index"]').waitFor({ timeout: LIVE_MS });
    const text = (await page.locator('main').textContent()) ?? '';
    expect(text).not.toMatch(/X-Registry|X-Consul/);
    expect(Number(await page.locator('[data-field="registry-index"]').textContent())).toBeGreaterThan(0);
  });
});
