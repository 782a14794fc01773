// Every route of the API. A new area adds its module here (and nowhere else).
import type { Route } from '../route';
import { catalogRoutes } from './catalog';
import type { RouteDeps } from './deps';
import { healthRoutes } from './health';
import { statusRoutes } from './status';

export function allRoutes(deps: RouteDeps): Route<any>[] {
  return [...catalogRoutes(deps), ...healthRoutes(deps), ...statusRoutes(deps)];
}
