// One more server agent on an InMemoryCluster's network (in-memory-cluster.ts starts three), for
// tests of how the cluster takes a new server in. It joins on its own only when given `retryJoin`;
// otherwise it waits, with no Raft state, until the leader adds it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryStorage, type InMemoryNetwork, type Transport } from '@registry/raft';
import { Agent, buildConfig, createLogger } from '@registry/server';

export interface ExtraServerOptions {
  node: string;
  /** Its address on the network; an IP:port, so that `PUT /v1/agent/join/<address>` accepts it. */
  address: string;
  retryJoin?: string[];
  nonVoter?: boolean;
  /** Wraps the server's link (e.g. a SilencedTransport). */
  wrap?: (transport: Transport) => Transport;
}

export interface ExtraServer {
  agent: Agent;
  stop(): Promise<void>;
}

export async function startExtraServer(network: InMemoryNetwork, o: ExtraServerOptions): Promise<ExtraServer> {
  const dir = await mkdtemp(join(tmpdir(), `registry-extra-${o.node}-`));
  const config = buildConfig({
    server: true,
    node: o.node,
    dataDir: join(dir, 'data'),
    httpPort: 0,
    serverPort: 0,
    dnsPort: -1,
    retryJoin: o.retryJoin ?? [],
    ...(o.nonVoter ? { nonVoter: true } : {}),
  });
  const storage = new MemoryStorage();
  const agent = await Agent.start(config, {
    logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', false),
    storage: () => storage,
    transport: async () => (o.wrap ? o.wrap(network.transport(o.address)) : network.transport(o.address)),
  });
  return {
    agent,
    stop: async () => {
      await agent.stop().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
