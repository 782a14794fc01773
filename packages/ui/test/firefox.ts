// Debian's firefox-esr for the browser tests (installed by .ci/run), driven by puppeteer-core over
// WebDriver BiDi — the protocol stock Firefox speaks (Playwright needs its own patched Firefox
// build, which cannot be installed from Debian or npm). Where no Firefox can be installed the
// tests are skipped and say why; nothing is downloaded at test time.
import { existsSync } from 'node:fs';

const CANDIDATES = ['/usr/bin/firefox-esr', '/usr/bin/firefox'];

function firefoxPath(): string | undefined {
  const fromEnv = process.env.FIREFOX_PATH;
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : undefined;
  return CANDIDATES.find((p) => existsSync(p));
}

export const FIREFOX = firefoxPath();
if (!FIREFOX) {
  console.warn(`Firefox browser tests skipped: no Firefox at ${process.env.FIREFOX_PATH ?? CANDIDATES.join(', ')} (apt-get install -y firefox-esr)`);
}
export const describeInFirefox = FIREFOX ? describe : describe.skip;
