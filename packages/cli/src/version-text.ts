// What `registry version` prints (Consul's two lines), apart from the commander command so that
// main.ts can print it without loading commander.
import { cliVersion } from './cli-version';

export function versionLines(): string[] {
  return [
    `Registry v${cliVersion()}`,
    'Protocol 2 spoken by default, understands 2 to 3 (agent will automatically use protocol >2 when speaking to compatible agents)',
  ];
}
