// `translate_wan_addrs` applied to every route's answer (consul-behaviour §1.7): an answer holding
// nodes of another datacenter — a `?dc=` request, or prepared-query failover results — shows their
// WAN addresses. The header `X-Registry-Translate-Addresses: true` is set by app.ts on every
// response while the setting is on (spec common behaviour 5; Consul's wrap; issue 15 part 3).
// Without the setting, routes run untouched.
import type { Route, RouteContext } from './route';
import { translateAddresses } from '../areas/address-translation';

export const TRANSLATE_HEADER = 'X-Registry-Translate-Addresses';

export function translatingRoutes(routes: Route<any>[], datacenter: string, enabled: boolean): Route<any>[] {
  if (!enabled) return routes;
  return routes.map((r) => ({
    ...r,
    async handle(ctx: RouteContext<any, any, any>) {
      const value = await r.handle(ctx);
      if (value === undefined || ctx.meta.raw) return value;
      return translateAddresses(value, datacenter).value;
    },
  }));
}
