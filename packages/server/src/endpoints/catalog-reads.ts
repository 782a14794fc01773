// Catalog reads (spec "Catalog"; consul-behaviour §5.4).
import type { ReadEndpoint } from './read-context';
import { sortNear } from './read-context';

type Meta = Record<string, string> | undefined;

export const catalogReads: Record<string, ReadEndpoint> = {
  'catalog.nodes': ({ store }, a: { nodeMeta: Meta; near?: string }) => {
    const r = store.catalogNodes({ nodeMeta: a.nodeMeta });
    return { ...r, value: sortNear(store, a.near, r.value, (n) => n.Node) };
  },
  'catalog.services': ({ store }, a: { nodeMeta: Meta }) => store.catalogServices({ nodeMeta: a.nodeMeta }),
  'catalog.service': ({ store }, a: { service: string; tags: string[]; nodeMeta: Meta; near?: string; connect: boolean }) => {
    const r = store.catalogService(a.service, { tags: a.tags, nodeMeta: a.nodeMeta, connect: a.connect });
    return { ...r, value: sortNear(store, a.near, r.value, (s) => s.Node) };
  },
  'catalog.node': ({ store }, a: { node: string }) => store.catalogNode(a.node),
};
