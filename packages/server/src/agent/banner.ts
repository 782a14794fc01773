// The lines `registry agent` prints once the agent runs, as Consul's agent prints them ("==> Consul
// agent running!" and the facts an operator checks first: version, node, datacenter, role, where
// the API, DNS and the cluster port listen, TLS) — plus where the web UI is, which Consul leaves to
// guesswork. Written to stdout by the CLI, before the log lines that follow.
import type { AgentConfig } from '../config/config';

export interface BannerFacts {
  version: string;
  nodeId: string;
  config: AgentConfig;
  /** Ports actually bound (0 or less: not served). */
  httpPort: number;
  httpsPort: number;
  dnsPort: number;
  /** The host:port other agents reach this one by (a server's server port; a client's HTTP port). */
  clusterAddress: string;
}

export function bannerLines(f: BannerFacts): string[] {
  const c = f.config;
  const port = (p: number) => (p > 0 ? String(p) : '-1');
  const [host, clusterPort] = splitHostPort(f.clusterAddress);
  const uiOn = c.ui === true || c.uiDir !== undefined;
  const uiUrl = f.httpPort > 0 ? `http://${urlHost(c.client)}:${f.httpPort}/ui/` : f.httpsPort > 0 ? `https://${urlHost(c.client)}:${f.httpsPort}/ui/` : '';
  const rows: [string, string][] = [
    ['Version', `'v${f.version}'`],
    ['Node ID', `'${f.nodeId}'`],
    ['Node name', `'${c.nodeName}'`],
    ['Datacenter', `'${c.datacenter}'`],
    ['Server', `${c.server} (Bootstrap: ${c.server && c.bootstrapExpect === 1}${c.dev ? ', dev mode: state in memory only' : ''})`],
    ['Client Addr', `[${c.client}] (HTTP: ${port(f.httpPort)}, HTTPS: ${port(f.httpsPort)}, DNS: ${port(f.dnsPort)})`],
    ['Cluster Addr', `${host} (${c.server ? 'Server' : 'Agent'}: ${clusterPort})`],
    ['Encrypt', `TLS-Outgoing: ${c.tls.verifyOutgoing}, TLS-Incoming: ${c.tls.verifyIncomingRpc || c.tls.verifyIncomingHttps}`],
    ['Web UI', uiOn && uiUrl ? uiUrl : 'off (-ui to serve it)'],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return [
    '==> Registry agent running!',
    ...rows.map(([k, v]) => `${' '.repeat(width - k.length + 4)}${k}: ${v}`),
    '',
    '==> Log data will now stream in as it occurs:',
    '',
  ];
}

function splitHostPort(address: string): [string, string] {
  const i = address.lastIndexOf(':');
  return i < 0 ? [address, ''] : [address.slice(0, i).replace(/^\[|\]$/g, ''), address.slice(i + 1)];
}

/** The client address as a URL host: a wildcard means "this host", shown as loopback. */
function urlHost(client: string): string {
  if (client === '0.0.0.0' || client === '::' || client === '') return '127.0.0.1';
  return client.includes(':') ? `[${client}]` : client;
}
