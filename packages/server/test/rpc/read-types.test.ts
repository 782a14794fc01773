// Type-level check of the read contract: `rpc.read(name, args)` is typed end to end by the read
// endpoint itself (endpoints/ → rpc/contract.ts ReadMethods, by declaration merging). Compiled by
// `tsc --noEmit -p tsconfig.jest.json` (part of `npm test`): were the contract to fall back to
// strings and `unknown`, a `@ts-expect-error` below would be unused — an error — or an assignment
// would stop compiling.
import type { CheckServiceNodeOut } from '@registry/store';
import type { ReadArgs, ReadName, ReadValue } from '../../src/rpc/contract';
import type { RpcApi } from '../../src/rpc/rpc-api';
import { readEndpoints } from '../../src/endpoints';
import { read, type ReadEndpoint } from '../../src/rpc/read-endpoint';

type Opts = Parameters<RpcApi['read']>[2];

export async function typed(rpc: RpcApi, opts: Opts): Promise<void> {
  const health = await rpc.read('health.service', { service: 'web', tags: [], nodeMeta: undefined, passing: true, connect: false }, opts);
  const instances: CheckServiceNodeOut[] = health.result.value;
  void instances;

  // @ts-expect-error an endpoint that does not exist
  await rpc.read('health.nothing', {}, opts);
  // @ts-expect-error args of the wrong shape for the endpoint
  await rpc.read('health.service', { node: 'n1' }, opts);
  // @ts-expect-error the value is the endpoint's, not any type the caller likes
  const wrong: string = (await rpc.read('catalog.services', { nodeMeta: undefined }, opts)).result.value;
  void wrong;
}

// A descriptor keeps its closure's types: args from the annotated parameter, the value from the return.
const sample = read({ blocking: false, run: ({ store }, a: { node: string }) => ({ index: store.lastIndex, value: a.node.length, keys: [] }) });
const sampleAsEndpoint: ReadEndpoint<{ node: string }, { index: number; value: number; keys: never[] }> = sample;
void sampleAsEndpoint;
export function descriptorTypes(ctx: Parameters<typeof sample.run>[0]): void {
  // @ts-expect-error the closure takes { node: string }, not a number
  sample.run(ctx, 3);
  // @ts-expect-error a forwarding policy that does not exist
  read({ forward: 'anywhere', run: () => ({ index: 0, value: 1, keys: [] }) });
  // @ts-expect-error the closure must answer a QueryResult ({ index, value, keys })
  read({ run: () => 'just a value' });
}
// The table's entries are descriptors: their policy is readable where rpc/ looks it up.
const renewForward: 'by-consistency' | 'leader' | 'local' = readEndpoints['session.renew'].forward;

// Every name of the table is a ReadName, with its args and value types.
const names: ReadName[] = Object.keys(readEndpoints) as ReadName[];
type NodeArgs = ReadArgs<'catalog.node'>;
const nodeArgs: NodeArgs = { node: 'n1' };
type SessionValue = ReadValue<'session.list'>;

test('the read table names every endpoint the contract types', () => {
  expect(names.length).toBeGreaterThan(20);
  expect(names).toContain('health.service');
  expect(nodeArgs.node).toBe('n1');
  const none: SessionValue | undefined = undefined;
  expect(none).toBeUndefined();
  expect(renewForward).toBe('leader');
  expect(sample.blocking).toBe(false);
});
