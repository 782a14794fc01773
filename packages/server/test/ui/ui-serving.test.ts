// The agent serves the web UI at /ui/ when `ui` is on (config key, -ui, or -dev by default), and
// `/` answers as Consul's index handler: 301 to /ui/ with the UI, "Registry Agent" without.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig } from '@registry/server';
import { startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';
import { freePort, spawnAgent } from '../support/processes';

jest.setTimeout(60_000);

const dir = mkdtempSync(join(tmpdir(), 'registry-ui-serving-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const get = (url: string) => fetch(url, { redirect: 'manual' });

describe('with the UI on (-dev)', () => {
  let a: TestAgent;
  beforeAll(async () => {
    a = await startDevAgent();
  });
  afterAll(() => a.stop());

  test('/ is a 301 to /ui/, and /ui to /ui/', async () => {
    for (const path of ['/', '/ui']) {
      const res = await get(a.url + path);
      expect(res.status).toBe(301);
      expect(res.headers.get('location')).toBe('/ui/');
    }
  });

  test('/ui/ is the page, and its script and stylesheet come from the agent (no CDN)', async () => {
    const page = await get(`${a.url}/ui/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('<script type="module" src="app.js">');
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    const js = await get(`${a.url}/ui/app.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    const css = await get(`${a.url}/ui/style.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
  });

  test('an unknown file under /ui/ is a 404, and the API is unaffected', async () => {
    expect((await get(`${a.url}/ui/no-such-file.js`)).status).toBe(404);
    expect((await get(`${a.url}/v1/status/leader`)).status).toBe(200);
  });
});

describe('with the UI off', () => {
  let a: TestAgent;
  beforeAll(async () => {
    a = await startDevAgent((c) => {
      c.ui = false;
    });
  });
  afterAll(() => a.stop());

  test('/ names the agent and /ui/ is not served', async () => {
    const root = await get(`${a.url}/`);
    expect(root.status).toBe(200);
    expect(await root.text()).toBe('Registry Agent');
    expect((await get(`${a.url}/ui/`)).status).toBe(404);
    expect((await get(`${a.url}/ui/app.js`)).status).toBe(404);
  });
});

test('ui_dir serves that folder at /ui/ instead of the built-in UI', async () => {
  const custom = join(dir, 'custom-ui');
  mkdirSync(custom);
  writeFileSync(join(custom, 'index.html'), '<!doctype html><title>mine</title>');
  const a = await startDevAgent((c) => {
    c.uiDir = custom;
  });
  try {
    const res = await get(`${a.url}/ui/`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<title>mine</title>');
    expect((await get(`${a.url}/ui/app.js`)).status).toBe(404);
  } finally {
    await a.stop();
  }
});

describe('the ui setting', () => {
  const file = (name: string, content: object) => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(content));
    return path;
  };

  test('is off by default, on with -ui or `ui: true`, on by default in -dev', () => {
    expect(buildConfig({ dataDir: dir }).ui).toBe(false);
    expect(buildConfig({ dataDir: dir, ui: true }).ui).toBe(true);
    expect(buildConfig({ dataDir: dir, configFile: [file('on.json', { ui: true })] }).ui).toBe(true);
    expect(buildConfig({ dev: true }).ui).toBe(true);
  });

  test('a config file can turn it off in -dev; -ui wins over the file', () => {
    const off = file('off.json', { ui: false });
    expect(buildConfig({ dev: true, configFile: [off] }).ui).toBe(false);
    expect(buildConfig({ dev: true, configFile: [off], ui: true }).ui).toBe(true);
  });

  test('ui_dir turns it on; a ui that is not a boolean is refused, naming the key', () => {
    expect(buildConfig({ dataDir: dir, configFile: [file('dir.json', { ui_dir: '/srv/ui' })] })).toMatchObject({ ui: true, uiDir: '/srv/ui' });
    expect(() => buildConfig({ dataDir: dir, configFile: [file('bad.json', { ui: 'yes' })] })).toThrow(/ui/);
  });
});

test('`registry agent -ui` serves the UI on a non-dev server', async () => {
  const httpPort = await freePort();
  const p = spawnAgent(['-server', '-bootstrap-expect', '1', '-node', 'ui-flag', '-dns-port', '-1', '-data-dir', join(dir, 'data'), '-ui'], httpPort, await freePort(), join(dir, 'agent.log'));
  try {
    await waitFor(async () => (await get(`${p.url}/ui/`)).status === 200, 20_000, 100);
    expect((await get(`${p.url}/`)).headers.get('location')).toBe('/ui/');
  } finally {
    p.child.kill('SIGTERM');
    await p.exited;
  }
});
