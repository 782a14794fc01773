// Catalog reads (spec "Catalog"; consul-behaviour §5.4), filtered by the token (§2.10). Ordinary reads
// (any consistency, blocking) whose routes return the value untouched, so identical non-blocking
// reads share one result until the next apply (`reuse`, rpc/reused-reads.ts).
import {
  filterCatalogNode,
  filterNodes,
  filterServiceNames,
  filterServiceNodes,
  mayLookUpConnect,
} from '../acl/read-filters';
import { read, type ReadEndpoint } from './read-context';
import { sortNear } from './read-context';

type Meta = Record<string, string> | undefined;

export const catalogReads = {
  'catalog.nodes': read({
    reuse: true,
    run: ({ store, authz }, a: { nodeMeta: Meta; near?: string }) => {
      const r = store.catalogNodes({ nodeMeta: a.nodeMeta });
      return { ...r, value: sortNear(store, a.near, filterNodes(authz, r.value), (n) => n.Node) };
    },
  }),
  'catalog.services': read({
    reuse: true,
    run: ({ store, authz }, a: { nodeMeta: Meta }) => {
      const r = store.catalogServices({ nodeMeta: a.nodeMeta });
      return { ...r, value: filterServiceNames(authz, r.value) };
    },
  }),
  'catalog.service': read({
    reuse: true,
    run: ({ store, authz }, a: { service: string; tags: string[]; nodeMeta: Meta; near?: string; connect: boolean }) => {
      const r = store.catalogService(a.service, { tags: a.tags, nodeMeta: a.nodeMeta, connect: a.connect });
      const visible = a.connect && !mayLookUpConnect(authz, a.service) ? [] : filterServiceNodes(authz, r.value);
      return { ...r, value: sortNear(store, a.near, visible, (s) => s.Node) };
    },
  }),
  'catalog.node': read({
    reuse: true,
    run: ({ store, authz }, a: { node: string }) => {
      const r = store.catalogNode(a.node);
      return { ...r, value: filterCatalogNode(authz, r.value) };
    },
  }),
} satisfies Record<string, ReadEndpoint>;
