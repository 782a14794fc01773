// Debian's chromium for the browser tests (installed by .ci/run). Where it cannot be installed the
// tests are skipped and say why; nothing is downloaded at test time.
import { existsSync } from 'node:fs';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

export function chromiumPath(): string | undefined {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : undefined;
  return CANDIDATES.find((p) => existsSync(p));
}

export const CHROMIUM = chromiumPath();
if (!CHROMIUM) {
  console.warn(`browser tests skipped: no Chromium at ${process.env.CHROMIUM_PATH ?? CANDIDATES.join(', ')} (apt-get install -y chromium)`);
}
export const describeInBrowser = CHROMIUM ? describe : describe.skip;

/** Chromium refuses its sandbox as root (CI runs as root); the page only loads the local agent. */
export const CHROMIUM_ARGS = process.getuid?.() === 0 ? ['--no-sandbox'] : [];
