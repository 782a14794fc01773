// Health reads (spec "Health"; consul-behaviour §5.4).
import type { ReadEndpoint } from './read-context';
import { sortNear } from './read-context';

type Meta = Record<string, string> | undefined;

export const healthReads: Record<string, ReadEndpoint> = {
  'health.node': ({ store }, a: { node: string }) => store.healthNode(a.node),
  'health.checks': ({ store }, a: { service: string; nodeMeta: Meta; near?: string }) => {
    const r = store.healthChecks(a.service, { nodeMeta: a.nodeMeta });
    return { ...r, value: sortNear(store, a.near, r.value, (c) => c.Node) };
  },
  'health.service': (
    { store },
    a: { service: string; tags: string[]; nodeMeta: Meta; passing: boolean; near?: string; connect: boolean },
  ) => {
    const r = store.healthService(a.service, {
      tags: a.tags,
      nodeMeta: a.nodeMeta,
      passing: a.passing,
      connect: a.connect,
    });
    return { ...r, value: sortNear(store, a.near, r.value, (e) => e.Node.Node) };
  },
  'health.state': ({ store }, a: { state: string; nodeMeta: Meta; near?: string }) => {
    const r = store.healthState(a.state, { nodeMeta: a.nodeMeta });
    return { ...r, value: sortNear(store, a.near, r.value, (c) => c.Node) };
  },
};
