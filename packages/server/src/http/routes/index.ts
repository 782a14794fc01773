// Every route of the API. A new area adds its module here (and nowhere else).
import type { Method, Route } from '../route';
import { aclRoutes } from './acl';
import { aclLegacyRoutes } from './acl-legacy';
import { catalogRoutes } from './catalog';
import type { RouteDeps } from './deps';
import { healthRoutes } from './health';
import { statusRoutes } from './status';
import { intentionRoutes } from './intentions';
import { connectRoutes } from './connect';
import { agentConnectRoutes } from './agent-connect';
import { agentServiceRoutes } from './agent-services';
import { agentCheckRoutes } from './agent-checks';
import { sessionRoutes } from './session';
import { kvRoutes } from './kv';
import { txnRoutes } from './txn';
import { queryRoutes } from './query';
import { areaRoutes } from './areas';
import { coordinateRoutes } from './coordinates';
import { agentMetricsRoutes } from './agent-metrics';
import { snapshotRoutes } from './snapshot';
import { agentReloadRoutes } from './agent-reload';
import { agentHealthRoutes } from './agent-health';
import { agentLifecycleRoutes } from './agent-lifecycle';
import { eventRoutes } from './events';
import { autopilotRoutes } from './autopilot';
import { localDatacenterOnly, type WanRouteDeps } from '../../areas/wan-route-deps';
import { translatingRoutes } from '../datacenter-routes';

/** `wan`: the network-area links (the agent passes them; without, only this datacenter is known). */
export function allRoutes(deps: RouteDeps, wan: WanRouteDeps = localDatacenterOnly(() => deps.agent.datacenter)): Route<any>[] {
  const routes = [...catalogRoutes(deps, () => wan.datacenters()), ...healthRoutes(deps), ...statusRoutes(deps), ...intentionRoutes(deps), ...connectRoutes(deps), ...agentConnectRoutes(deps), ...agentServiceRoutes(deps), ...agentCheckRoutes(deps), ...aclRoutes(deps), ...aclLegacyRoutes(deps), ...sessionRoutes(deps), ...kvRoutes(deps), ...txnRoutes(deps), ...queryRoutes(deps, wan.queryExecutor), ...areaRoutes(deps, wan), ...coordinateRoutes(deps, wan), ...agentMetricsRoutes(deps), ...snapshotRoutes(deps, () => wan.datacenters()), ...agentReloadRoutes(deps), ...agentHealthRoutes(deps), ...agentLifecycleRoutes(deps), ...eventRoutes(deps), ...autopilotRoutes(deps)];
  return translatingRoutes(routes, deps.agent.datacenter, wan.translateWanAddrs);
}

/**
 * Method and path of every route, for tests that must cover them all (the ACL walk fails when a route
 * has no entry). Built with inert deps: route modules only capture deps, they do not call them here.
 */
export function routeList(): { method: Method; path: string }[] {
  const inert: any = new Proxy(function inert() {}, { get: () => inert, apply: () => inert });
  return allRoutes(inert as RouteDeps).map((r) => ({ method: r.method, path: r.path }));
}
