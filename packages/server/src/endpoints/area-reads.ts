// Network-area reads (spec "Network areas"): operator:read is required (403, not filtering, as for
// the other operator endpoints). Also the read another datacenter forwards here to run a prepared
// query during its failover (areas/remote-query.ts): the rendered query travels with it.
import type { CheckServiceNodeOut } from '@registry/store';
import { forbidden } from '../errors';
import { filterNodes, shuffle } from '../queries/execute';
import type { RemoteResult } from '../queries/failover';
import type { RemoteExecuteArgs } from '../areas/remote-query';
import { read, type ReadEndpoint } from './read-context';

export const areaReads = {
  'area.list': read({
    run: ({ store, authz }) => {
      if (!authz.operatorRead()) throw forbidden();
      return store.areaList();
    },
  }),
  'area.get': read({
    run: ({ store, authz }, a: { id: string }) => {
      if (!authz.operatorRead()) throw forbidden();
      return store.areaGet(a.id);
    },
  }),
  // No sort by distance: the query's source is in another datacenter (Consul's ExecuteRemote).
  'query.execute-remote': read({
    blocking: false,
    run: ({ store, authz }, a: RemoteExecuteArgs) => {
      const s = a.query.Service;
      const health = store.healthService(s.Service, { connect: s.Connect });
      let nodes: CheckServiceNodeOut[] = shuffle(filterNodes(s, health.value)).filter(
        (n) => authz.nodeRead(n.Node.Node) && authz.serviceRead(n.Service.Service),
      );
      if (a.limit > 0) nodes = nodes.slice(0, a.limit);
      const value: RemoteResult = { Nodes: nodes, DNS: a.query.DNS };
      return { index: 0, keys: health.keys, value };
    },
  }),
} satisfies Record<string, ReadEndpoint>;
