import type { Command, CommandType } from '../commands';
import { catalogDeregister } from './catalog-deregister';
import { catalogRegister } from './catalog-register';
import type { CommandHandler } from './command-handler';
import { coordinateUpdate } from './coordinate-update';
import { aclBootstrap, aclBuiltins } from '../acl/bootstrap-handlers';
import { policyCreate, policyDelete, policyUpdate } from '../acl/policy-handlers';
import { tokenClone, tokenCreate, tokenDelete, tokenUpdate } from '../acl/token-handlers';
import { legacyDelete, legacySet } from '../acl/legacy-handlers';
import { aclReplicate } from '../acl/replication-handlers';
import { intentionDelete, intentionUpsert } from '../intentions/intention-commands';
import { caInitialize, caPrune, caRotate, caSerials, caSetConfig } from '../ca/ca-commands';

import { sessionCreate, sessionDestroy } from '../sessions/session-commands';
import { kvApply, kvTxn } from '../kv/kv-commands';
import { txnApply } from '../catalog-txn/txn-command';
import { queryDelete, querySet } from '../queries/query-commands';
import { areaCreate, areaDelete, areaServers, areaUpdate } from '../areas/area-commands';
import { eventFire } from '../events/event-commands';
import { autopilotSetConfig } from '../autopilot/autopilot-commands';
import { snapshotRestore } from './snapshot-restore';

type HandlerTable = { [T in CommandType]: CommandHandler<Extract<Command, { type: T }>> };

/** Every command type's handler; the mapped type makes a missing one a compile error. */
export const handlers: HandlerTable = {
  'session.create': sessionCreate,
  'session.destroy': sessionDestroy,
  'kv.apply': kvApply,
  'kv.txn': kvTxn,
  txn: txnApply,
  'query.set': querySet,
  'query.delete': queryDelete,
  'catalog.register': catalogRegister,
  'catalog.deregister': catalogDeregister,
  'coordinate.update': coordinateUpdate,
  'acl.builtins': aclBuiltins,
  'acl.bootstrap': aclBootstrap,
  'acl.token-create': tokenCreate,
  'acl.token-update': tokenUpdate,
  'acl.token-clone': tokenClone,
  'acl.token-delete': tokenDelete,
  'acl.legacy-set': legacySet,
  'acl.legacy-delete': legacyDelete,
  'acl.replicate': aclReplicate,
  'acl.policy-create': policyCreate,
  'acl.policy-update': policyUpdate,
  'acl.policy-delete': policyDelete,
  'snapshot.restore': snapshotRestore,
  'intention.upsert': intentionUpsert,
  'intention.delete': intentionDelete,
  'ca.initialize': caInitialize,
  'ca.rotate': caRotate,
  'ca.set-config': caSetConfig,
  'ca.serials': caSerials,
  'ca.prune': caPrune,
  'area.create': areaCreate,
  'area.update': areaUpdate,
  'area.delete': areaDelete,
  'area.servers': areaServers,
  'event.fire': eventFire,
  'autopilot.set-config': autopilotSetConfig,
};

export function handlerFor(type: unknown): CommandHandler<Command> | undefined {
  if (typeof type !== 'string' || !Object.prototype.hasOwnProperty.call(handlers, type)) return undefined;
  return handlers[type as CommandType] as CommandHandler<Command>;
}
