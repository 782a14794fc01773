// Operator reads that live in the replicated state: the autopilot configuration (operator:read,
// 403 otherwise, as Consul's Operator.AutopilotGetConfiguration).
import { forbidden } from '../errors';
import { read, type ReadEndpoint } from './read-context';

export const operatorReads = {
  'operator.autopilot-configuration': read({
    run: ({ store, authz }) => {
      if (!authz.operatorRead()) throw forbidden();
      return store.autopilotConfig();
    },
  }),
} satisfies Record<string, ReadEndpoint>;
