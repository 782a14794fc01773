// A secondary's replication lists the primary's policies (or tokens) and then batch-reads the changed
// rows; both are stale reads, each served by the nearest live primary server, and the nearest can
// change between the two. Seen in CI: the list came from a server that had applied a new policy, the
// batch read from one that had not, the round took the list's index anyway, and the next round's
// blocking list waited at that index — the policy arrived only with the next change at the primary,
// up to 30 s later, or (the primary lost) never. Here the primary is a pair of stores, one a step
// behind, behind a fake Rpc; the replication is the server's own, committing into a real Store.
import { createLogger } from '@registry/server';
import { Store, type Command } from '@registry/store';
import { AclReplication } from '../../src/acl/acl-replication';
import type { Rpc } from '../../src/rpc/rpc';
import type { QueryOptions } from '../../src/rpc/query-options';
import { waitFor } from '../support/dev-agent';

jest.setTimeout(30_000);

/** A primary server's tables, as a store that applies commands in order. */
class PrimaryServer {
  readonly store = new Store();
  private index = 0;

  apply(cmd: Command): void {
    this.index += 1;
    this.store.apply(this.index, cmd);
  }
}

/**
 * The primary as the secondary's Rpc sees it: list reads answered by `fresh`, batch reads by
 * `behind` until it has caught up (`behindFor` batch reads), as when the nearest server changes
 * between the two. A blocking list with nothing new waits out the signal (the real one waits 30 s).
 */
function primaryRpc(fresh: PrimaryServer, behind: PrimaryServer, secondary: Store, behindFor: number): Rpc & { batchReads: Map<string, number> } {
  let secondaryIndex = 1_000;
  const rpc = {
    batchReads: new Map<string, number>(),
    async read(name: string, args: Record<string, string[]>, opts: QueryOptions, signal?: AbortSignal) {
      const batchReads = rpc.batchReads.get(name) ?? 0;
      if (name.endsWith('-batch')) rpc.batchReads.set(name, batchReads + 1);
      const from = name.endsWith('-batch') && batchReads < behindFor ? behind.store : fresh.store;
      const run = () => {
        switch (name) {
          case 'acl.policies':
            return from.aclPolicies();
          case 'acl.tokens':
            return from.aclTokens();
          case 'acl.policy-batch': {
            const rows = args.ids.map((id) => from.aclPolicy(id).value).filter((p) => p !== null);
            return { index: from.aclPolicies().index, value: rows, keys: [] };
          }
          case 'acl.token-batch':
            return from.aclTokenRows(args.accessors);
          default:
            throw new Error(`unexpected read ${name}`);
        }
      };
      const result = run();
      if (opts.minIndex > 0 && result.index <= opts.minIndex) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 20_000);
          signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()));
        });
      }
      return { result, meta: {} };
    },
    async apply(cmd: Command) {
      secondaryIndex += 1;
      return secondary.apply(secondaryIndex, cmd);
    },
  };
  return rpc as unknown as Rpc & { batchReads: Map<string, number> };
}

test.each(['policies', 'tokens'] as const)('%s: a batch read that missed a listed row is asked again at once, not after the next change', async (kind) => {
  const fresh = new PrimaryServer();
  const behind = new PrimaryServer();
  const both = (cmd: Command) => (fresh.apply(cmd), behind.apply(cmd));
  // Both primary servers hold the first policy and token; only `fresh` has applied the second pair.
  const policy = (id: string, name: string): Command => ({ type: 'acl.policy-create', policy: { ID: id, Name: name, Rules: 'key_prefix "" { policy = "read" }' } });
  const token = (accessor: string, secret: string): Command => ({
    type: 'acl.token-create',
    token: { AccessorID: accessor, SecretID: secret, CreateTime: '2026-11-30T00:00:00Z', Description: accessor, Policies: [] },
  });
  both(policy('11111111-0000-4000-8000-000000000001', 'first'));
  both(token('22222222-0000-4000-8000-000000000001', '33333333-0000-4000-8000-000000000001'));
  fresh.apply(policy('11111111-0000-4000-8000-000000000002', 'second'));
  fresh.apply(token('22222222-0000-4000-8000-000000000002', '33333333-0000-4000-8000-000000000002'));

  const secondary = new Store();
  const rpc = primaryRpc(fresh, behind, secondary, 1);
  const replication = new AclReplication({
    store: secondary,
    rpc,
    datacenter: 'dc2',
    primary: 'dc1',
    replicationToken: () => 'replication',
    replicateTokens: kind === 'tokens',
    logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', false),
  });
  replication.start();
  try {
    const held = () =>
      kind === 'policies'
        ? secondary.aclPolicies().value.map((p) => p.Name).sort()
        : secondary.aclTokens().value.map((t) => t.Description).sort();
    const want = kind === 'policies' ? ['first', 'second'] : ['22222222-0000-4000-8000-000000000001', '22222222-0000-4000-8000-000000000002'];
    // Generous: the retry comes 100 ms after the short round; the bug waited for the next change.
    await waitFor(async () => want.every((w) => held().includes(w)), 5_000, 20);
    // The first batch read of the kind under test was the short one, and another followed it.
    expect(rpc.batchReads.get(kind === 'policies' ? 'acl.policy-batch' : 'acl.token-batch')).toBeGreaterThanOrEqual(2);
  } finally {
    replication.stop();
  }
});
