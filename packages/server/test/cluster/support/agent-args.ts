/**
 * The command line of one server of a test cluster (the flags of
 * shared/spec/DECISIONS.md), and the environment that makes it dial its peers
 * through link proxies.
 */

export interface AgentSpec {
  node: string;
  dataDir: string;
  httpPort: number;
  serverPort: number;
  bootstrapExpect: number;
  /** `host:port` server addresses (or proxies in front of them) to join. */
  retryJoin: readonly string[];
  datacenter?: string;
  logLevel?: 'trace' | 'debug' | 'info' | 'warn' | 'error';
  /** Appended last, so they can repeat or override a flag. */
  extraArgs?: readonly string[];
}

/** Arguments after the CLI binary: `agent -server …`, every address on loopback. */
export function agentArgs(spec: AgentSpec): string[] {
  return [
    'agent',
    '-server',
    '-node', spec.node,
    '-datacenter', spec.datacenter ?? 'dc1',
    '-data-dir', spec.dataDir,
    '-bind', '127.0.0.1',
    '-client', '127.0.0.1',
    '-http-port', String(spec.httpPort),
    '-server-port', String(spec.serverPort),
    '-bootstrap-expect', String(spec.bootstrapExpect),
    ...spec.retryJoin.flatMap((address) => ['-retry-join', address]),
    // REGISTRY_TEST_LOG_LEVEL=debug: chasing a flake, with REGISTRY_KEEP_CLUSTER_DIR=1 to keep the logs.
    '-log-level', spec.logLevel ?? ((process.env.REGISTRY_TEST_LOG_LEVEL as AgentSpec['logLevel']) || 'info'),
    ...(spec.extraArgs ?? []),
  ];
}

/**
 * Name of the environment variable holding a JSON object from a peer's server
 * address (as the Raft configuration knows it) to the address to dial instead.
 * Without it a server that learnt its peers' real addresses while joining would
 * go around the proxies; the server's dialer must honour it for proxied
 * partitions to work (a test-only hook, unset in production).
 */
export const DIAL_MAP_ENV = 'REGISTRY_TEST_DIAL_MAP';

/** The dial map of one server: each peer's real address → the proxy on that link. */
export function dialMap(links: ReadonlyArray<{ peerAddress: string; proxyAddress: string }>): string {
  return JSON.stringify(Object.fromEntries(links.map((l) => [l.peerAddress, l.proxyAddress])));
}
