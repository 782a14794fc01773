// The intention and CA endpoints' leader-side checks (Consul's Intention.Apply and
// ConnectCA.ConfigurationSet; their reads are in intention-reads.ts and connect-reads.ts), run on the
// leader by authorizeCommand (writes.ts): intention writes need `intentions:write` on the destination
// (the old one too when an update moves it); CA settings need operator:write; the CA's own
// bookkeeping (initialise, serials, pruning) is only ever issued by servers themselves, as internal
// commands (consul-behaviour §2.9).
import type { Authorizer } from '@registry/acl';
import type { Command, Store } from '@registry/store';
import { forbidden } from '../errors';

type ConnectCommand = Extract<Command, { type: `intention.${string}` | `ca.${string}` }>;

export function authorizeConnectCommand(cmd: ConnectCommand, authz: Authorizer, store: Store): void {
  switch (cmd.type) {
    case 'intention.upsert': {
      const dest = cmd.intention?.DestinationName ?? '';
      if (dest !== '' && !authz.intentionWrite(dest)) throw forbidden();
      if (cmd.op === 'update') {
        const old = store.intentionGet(cmd.intention?.ID ?? '').value;
        if (old && !authz.intentionWrite(old.DestinationName)) throw forbidden();
      }
      return;
    }
    case 'intention.delete': {
      const old = store.intentionGet(cmd.id).value;
      if (old && !authz.intentionWrite(old.DestinationName)) throw forbidden();
      return;
    }
    case 'ca.rotate':
    case 'ca.set-config':
      if (!authz.operatorWrite()) throw forbidden();
      return;
    case 'ca.initialize':
    case 'ca.serials':
    case 'ca.prune':
      throw forbidden();
  }
}
