// The one place a request's token becomes an Authorizer. Reads get it in their ReadContext and
// filter; writes are checked on the leader, against the leader's state, by authorizeCommand.
import { Authorizer } from '@registry/acl';
import type { Command, Store } from '@registry/store';
import { forbidden } from '../http/errors';

export interface AclResolver {
  /** The Authorizer for a token secret (undefined → anonymous); throws 403 `ACL not found`. */
  resolve(secret: string | undefined): Authorizer;
  readonly enabled: boolean;
}

/** ACLs disabled: everything is allowed. */
export const allowAllResolver: AclResolver = {
  enabled: false,
  resolve: () => Authorizer.allowAll(),
};

/**
 * Refuse `cmd` unless `authz` allows it (consul-behaviour §2.9). Runs on the leader just before
 * the command is proposed. One case per command type; a command type without a case is refused,
 * so a new write cannot silently skip its ACL check.
 */
export function authorizeCommand(cmd: Command, authz: Authorizer, _store: Store): void {
  switch (cmd.type) {
    case 'catalog.register': {
      const req = cmd.req;
      if (!authz.nodeWrite(req.Node)) throw forbidden();
      if (req.Service && !authz.serviceWrite(req.Service.Service ?? '')) throw forbidden();
      return;
    }
    case 'catalog.deregister':
      if (!authz.nodeWrite(cmd.req.Node)) throw forbidden();
      return;
    case 'coordinate.update':
      return;
    default:
      throw forbidden();
  }
}
