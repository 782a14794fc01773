// `translate_wan_addrs` applied to every route's answer (consul-behaviour §1.7): an answer holding
// nodes of another datacenter — a `?dc=` request, or prepared-query failover results — shows their
// WAN addresses. Every response carries `X-Registry-Translate-Addresses: true` while the setting is
// on (the spec: "when address translation is enabled the response carries" it; Consul sets it on
// every response). Without the setting, routes run untouched.
import type { Route, RouteContext } from '../http/route';
import { translateAddresses } from './address-translation';

export const TRANSLATE_HEADER = 'X-Registry-Translate-Addresses';

export function translatingRoutes(routes: Route<any>[], datacenter: string, enabled: boolean): Route<any>[] {
  if (!enabled) return routes;
  return routes.map((r) => ({
    ...r,
    async handle(ctx: RouteContext<any>) {
      ctx.meta.headers[TRANSLATE_HEADER] = 'true';
      const value = await r.handle(ctx);
      if (value === undefined || ctx.meta.raw) return value;
      return translateAddresses(value, datacenter).value;
    },
  }));
}
