// Node coordinates (Consul's /v1/coordinate/nodes and /node/:node): filtered by node:read in a list;
// a single node the token may not read is refused (DECISIONS.md: single-object reads answer 403).
import type { NodeCoordinate } from '@registry/store';
import { forbidden } from '../errors';
import { read, type ReadEndpoint } from './read-context';

export const coordinateReads = {
  'coordinate.nodes': read({
    run: ({ store, authz }, a: { segment?: string }) => {
      const r = store.coordinateNodes();
      const value = r.value.filter((c: NodeCoordinate) => authz.nodeRead(c.Node) && (a.segment === undefined || c.Segment === a.segment));
      return { ...r, value };
    },
  }),
  'coordinate.node': read({
    run: ({ store, authz }, a: { node: string; segment?: string }) => {
      if (!authz.nodeRead(a.node)) throw forbidden();
      const r = store.coordinateNodes();
      const node = a.node.toLowerCase();
      const value = r.value.filter((c: NodeCoordinate) => c.Node.toLowerCase() === node && (a.segment === undefined || c.Segment === a.segment));
      return { ...r, value };
    },
  }),
} satisfies Record<string, ReadEndpoint>;
