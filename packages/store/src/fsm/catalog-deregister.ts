// catalog.deregister: ServiceID takes precedence, then CheckID, else the whole node goes. Unknown
// nodes, services and checks are not an error (Consul with ACLs off answers true).
import { CommandError } from '../command-error';
import type { DeregisterRequest } from '../catalog/requests';
import { optObject, str } from '../input-fields';
import type { CommandHandler } from './command-handler';

export const catalogDeregister: CommandHandler<{ req: DeregisterRequest }> = (state, cmd) => {
  const req = optObject(cmd.req, 'req') ?? {};
  const node = str(req, 'Node', '');
  if (node === '') return new CommandError('Must provide node');
  const serviceId = str(req, 'ServiceID', '');
  const checkId = str(req, 'CheckID', '');
  return (txn) => {
    if (serviceId !== '') state.catalog.deleteService(node, serviceId, txn);
    else if (checkId !== '') state.catalog.deleteCheck(node, checkId, txn);
    else state.deleteNode(node, txn);
    return true;
  };
};
