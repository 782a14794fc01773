// What `registry version` prints (two lines, as Consul's; the second names the Consul API registry
// implements rather than Consul's gossip protocol, which registry does not speak), apart from the
// commander command so that main.ts can print it without loading commander.
import { cliVersion } from './cli-version';

export function versionLines(): string[] {
  return [
    `Registry v${cliVersion()}`,
    'Consul 1.4.5 HTTP API (X-Consul-* headers and Consul tools with http_config.consul_compat)',
  ];
}
