// Health reads (spec "Health"; consul-behaviour §5.4), filtered by the token (§2.10). Ordinary reads
// (any consistency, blocking) whose routes return the value untouched, so identical non-blocking
// reads share one result until the next apply (`reuse`, rpc/reused-reads.ts).
import { filterChecks, filterCheckServiceNodes, mayLookUpConnect } from '../acl/read-filters';
import { read, type ReadEndpoint } from './read-context';
import { sortNear } from './read-context';

type Meta = Record<string, string> | undefined;

export const healthReads = {
  'health.node': read({
    reuse: true,
    run: ({ store, authz }, a: { node: string }) => {
      const r = store.healthNode(a.node);
      // The spec's node-check entries also carry the node's ID (as Consul's documented sample does).
      const id = store.catalogNode(a.node).value?.Node.ID ?? '';
      return { ...r, value: filterChecks(authz, r.value).map((c) => ({ ID: id, ...c })) };
    },
  }),
  'health.checks': read({
    reuse: true,
    run: ({ store, authz }, a: { service: string; nodeMeta: Meta; near?: string }) => {
      const r = store.healthChecks(a.service, { nodeMeta: a.nodeMeta });
      return { ...r, value: sortNear(store, a.near, filterChecks(authz, r.value), (c) => c.Node) };
    },
  }),
  'health.service': read({
    reuse: true,
    run: (
      { store, authz },
      a: { service: string; tags: string[]; nodeMeta: Meta; passing: boolean; near?: string; connect: boolean },
    ) => {
      const r = store.healthService(a.service, {
        tags: a.tags,
        nodeMeta: a.nodeMeta,
        passing: a.passing,
        connect: a.connect,
      });
      const visible = a.connect && !mayLookUpConnect(authz, a.service) ? [] : filterCheckServiceNodes(authz, r.value);
      return { ...r, value: sortNear(store, a.near, visible, (e) => e.Node.Node) };
    },
  }),
  'health.state': read({
    reuse: true,
    run: ({ store, authz }, a: { state: string; nodeMeta: Meta; near?: string }) => {
      const r = store.healthState(a.state, { nodeMeta: a.nodeMeta });
      return { ...r, value: sortNear(store, a.near, filterChecks(authz, r.value), (c) => c.Node) };
    },
  }),
} satisfies Record<string, ReadEndpoint>;
