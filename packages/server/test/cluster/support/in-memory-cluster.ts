// Three server agents in the test's process, Raft over an in-memory network and on memory storage
// (through the Agent's storage and transport factories), each with an HTTP port on loopback. For
// cluster behaviour that needs no real process; tests reach the agents over HTTP, or the network
// directly (one more address on it).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryNetwork, MemoryStorage } from '@registry/raft';
import { Agent, buildConfig, createLogger } from '@registry/server';
import { http, waitFor } from '../../support/dev-agent';

export const agentUrl = (a: Agent) => `http://127.0.0.1:${a.httpPort}`;

export class InMemoryCluster {
  readonly network = new InMemoryNetwork();
  /** The servers' addresses on the network: `<name>-s1:1`…`<name>-s3:1`. */
  readonly addresses: string[];
  /** agents[i] at addresses[i], once started. */
  readonly agents: Agent[] = [];
  /** agents[i]'s Raft storage. */
  readonly storages: MemoryStorage[] = [];
  private dir: string | undefined;

  constructor(name: string) {
    this.addresses = [1, 2, 3].map((i) => `${name}-s${i}:1`);
  }

  /** Starts the three agents (data in a fresh folder `dirPrefix…`) and waits until every one knows a leader. */
  async start(dirPrefix: string): Promise<void> {
    const dir = (this.dir = await mkdtemp(join(tmpdir(), dirPrefix)));
    await Promise.all(
      this.addresses.map(async (address, i) => {
        const config = buildConfig({
          server: true,
          bootstrapExpect: 3,
          node: `s${i + 1}`,
          dataDir: join(dir, `s${i + 1}`),
          httpPort: 0,
          serverPort: 0,
          dnsPort: -1,
          retryJoin: this.addresses.filter((a) => a !== address),
        });
        const storage = new MemoryStorage();
        this.storages[i] = storage;
        this.agents[i] = await Agent.start(config, {
          logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', false),
          storage: () => storage,
          transport: async () => this.network.transport(address),
        });
      }),
    );
    await waitFor(
      async () => (await Promise.all(this.agents.map(async (a) => (await http(agentUrl(a), 'GET', '/v1/status/leader')).json))).every((l) => typeof l === 'string' && l !== ''),
      20_000,
    );
  }

  /** Stops every agent started and removes the data folder. */
  async stop(): Promise<void> {
    await Promise.all(this.agents.map((a) => a?.stop().catch(() => undefined)));
    if (this.dir !== undefined) await rm(this.dir, { recursive: true, force: true });
  }
}
