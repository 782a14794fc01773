// catalog.register (Consul's Catalog.Register endpoint checks plus state.EnsureRegistration), with
// every check done before anything is written. Errors use Consul's texts, in Consul's order.
import { CommandError } from '../command-error';
import { normalizeCheck } from '../catalog/check-definition';
import { fold } from '../catalog/keys';
import { nodeIdProblem } from '../catalog/node-id';
import type { NodeData } from '../catalog/records';
import type { RegisterRequest } from '../catalog/requests';
import { normalizeService } from '../catalog/service-definition';
import { metaProblem } from '../catalog/service-meta';
import { bool, optList, optObject, str, strMap } from '../input-fields';
import type { CommandHandler } from './command-handler';

export const catalogRegister: CommandHandler<{ req: RegisterRequest }> = (state, cmd) => {
  const req = optObject(cmd.req, 'req') ?? {};
  const nodeName = str(req, 'Node', '');
  if (nodeName === '') return new CommandError('Must provide node');
  const address = str(req, 'Address', '');
  const skipNodeUpdate = bool(req, 'SkipNodeUpdate', '');
  if (address === '' && !skipNodeUpdate) return new CommandError('Must provide address if SkipNodeUpdate is not set');
  const id = str(req, 'ID', '');
  const idProblem = id === '' ? undefined : nodeIdProblem(id);
  if (idProblem) return new CommandError(`Bad node ID: ${idProblem}`);
  const taggedAddresses = strMap(req, 'TaggedAddresses', '');
  const nodeMeta = strMap(req, 'NodeMeta', '');
  const nodeKey = fold(nodeName);

  const serviceInput = optObject(req.Service, 'Service');
  const service = serviceInput ? normalizeService(serviceInput, nodeKey) : undefined;
  const checkInputs = [
    ...(req.Check === undefined || req.Check === null ? [] : [{ value: req.Check, path: 'Check' }]),
    ...(optList(req, 'Checks', '') ?? []).map((value, i) => ({ value, path: `Checks[${i}]` })),
  ];
  const checks = checkInputs.flatMap(({ value, path }) => {
    const c = optObject(value, path);
    return c ? [normalizeCheck(c, nodeName, path)] : [];
  });

  // The node: an existing node's fields are left alone with SkipNodeUpdate, but a missing node is created.
  const existing = state.catalog.node(nodeName);
  let node: NodeData | undefined;
  let renamedFrom: string | undefined;
  if (!skipNodeUpdate || !existing) {
    if (id !== '') {
      if (existing && existing.ID !== '' && fold(existing.ID) !== fold(id)) {
        return new CommandError(
          `failed inserting node: Error while renaming Node ID: "${id}": Node name ${nodeName} is reserved by node ${existing.ID} with name ${existing.Node}`,
        );
      }
      // The ID is known under another name: the node is being renamed, and the old name goes.
      const byId = state.catalog.nodeById(id);
      if (byId && fold(byId.Node) !== nodeKey) renamedFrom = byId.Node;
    }
    node = {
      // A request without an ID keeps the node's known ID; one with an ID adopts a node that had none.
      ID: id || existing?.ID || '',
      Node: nodeName,
      Address: address,
      Datacenter: state.datacenter,
      TaggedAddresses: taggedAddresses,
      Meta: nodeMeta,
    };
  }

  if (service) {
    const problem = metaProblem(service.Meta);
    if (problem) {
      return new CommandError(`failed inserting service: Invalid Service Meta for node ${nodeName} and serviceID ${service.ID}: ${problem}`);
    }
  }

  for (const c of checks) {
    if (fold(c.node) !== nodeKey) return new CommandError(`check node "${c.node}" does not match node "${nodeName}"`);
  }
  // Services on the node once this request is in: those already there (a renamed node's old services
  // go with its old name) plus the one being registered.
  const servicesAfter = new Set(state.catalog.servicesOf(nodeName).map((s) => fold(s.ID)));
  if (service) servicesAfter.add(fold(service.ID));
  for (const c of checks) {
    if (c.ServiceID !== '' && !servicesAfter.has(fold(c.ServiceID))) {
      return new CommandError(`failed inserting check: Missing service registration on node "${nodeName}"`);
    }
  }

  return (txn) => {
    if (renamedFrom !== undefined) state.deleteNode(renamedFrom, txn);
    if (node) state.catalog.putNode(node, txn);
    if (service) state.catalog.putService(service, txn);
    for (const c of checks) {
      state.catalog.putCheck(
        {
          nodeKey,
          CheckID: c.CheckID,
          Name: c.Name,
          Status: c.Status,
          Notes: c.Notes,
          Output: c.Output,
          serviceKey: fold(c.ServiceID),
          Definition: c.Definition,
        },
        txn,
      );
    }
    return true;
  };
};
