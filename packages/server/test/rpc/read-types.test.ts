// Type-level check of the read contract: `rpc.read(name, args)` is typed end to end by the read
// endpoint itself (endpoints/ → rpc/contract.ts ReadMethods, by declaration merging). Compiled by
// `tsc --noEmit -p tsconfig.jest.json` (part of `npm test`): were the contract to fall back to
// strings and `unknown`, a `@ts-expect-error` below would be unused — an error — or an assignment
// would stop compiling.
import type { CheckServiceNodeOut } from '@registry/store';
import type { ReadArgs, ReadName, ReadValue } from '../../src/rpc/contract';
import type { RpcApi } from '../../src/rpc/rpc-api';
import { readEndpoints } from '../../src/endpoints';

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
});
