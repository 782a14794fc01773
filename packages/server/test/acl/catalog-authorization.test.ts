// Who may register and deregister what (consul-behaviour §2.9), against a store, without HTTP.
import { Authorizer, parseRules } from '@registry/acl';
import { Store, type RegisterRequest } from '@registry/store';
import { authorizeCommand } from '../../src/endpoints/writes';
import { RegistryError } from '../../src/errors';
import { statusOf } from '../../src/http/error-status';

const authz = (rules: string) => new Authorizer([parseRules(rules)], 'deny');
const WEB = authz('service "web" { policy = "write" }\nnode_prefix "" { policy = "read" }');
const WEB_PREFIX = authz('service_prefix "web" { policy = "write" }\nnode_prefix "" { policy = "read" }');
const NODE_N1 = authz('node "n1" { policy = "write" }');

function storeWithNode(): Store {
  const store = new Store();
  let i = 0;
  const reg = (req: RegisterRequest) => store.apply(++i, { type: 'catalog.register', req });
  reg({ Node: 'n1', Address: '10.0.0.1', NodeMeta: { rack: 'a' }, Service: { ID: 'web1', Service: 'web' }, Check: { CheckID: 'web-check', Name: 'w', ServiceID: 'web1' } });
  reg({ Node: 'n1', Address: '10.0.0.1', NodeMeta: { rack: 'a' }, Service: { ID: 'db1', Service: 'db' }, Checks: [{ CheckID: 'db-check', Name: 'd', ServiceID: 'db1' }, { CheckID: 'node-check', Name: 'n' }] });
  return store;
}

/** 'ok', or the status and text the leader would answer with. */
function verdict(a: Authorizer, cmd: Parameters<typeof authorizeCommand>[0], store = storeWithNode()): string {
  try {
    authorizeCommand(cmd, a, store, true);
    return 'ok';
  } catch (err) {
    if (err instanceof RegistryError) return `${statusOf(err.kind)} ${err.message}`;
    throw err;
  }
}
const register = (req: RegisterRequest) => ({ type: 'catalog.register' as const, req });
const deregister = (req: { Node: string; ServiceID?: string; CheckID?: string }) => ({ type: 'catalog.deregister' as const, req });
const SAME_NODE = { Node: 'n1', Address: '10.0.0.1', NodeMeta: { rack: 'a' } };

describe('catalog register', () => {
  test.each([
    ['a service on an unchanged existing node needs only service write', WEB, register({ ...SAME_NODE, Service: { ID: 'web2', Service: 'web' } }), 'ok'],
    ['SkipNodeUpdate leaves the node alone', WEB, register({ Node: 'n1', SkipNodeUpdate: true, Service: { Service: 'web' } }), 'ok'],
    ['a changed address needs node write', WEB, register({ ...SAME_NODE, Address: '10.0.0.2', Service: { Service: 'web' } }), '403 Permission denied'],
    ['changed node meta needs node write', WEB, register({ ...SAME_NODE, NodeMeta: { rack: 'b' }, Service: { Service: 'web' } }), '403 Permission denied'],
    ['a new node needs node write', WEB, register({ Node: 'n2', Address: '10.0.0.2', Service: { Service: 'web' } }), '403 Permission denied'],
    ['node write alone registers the node', NODE_N1, register({ Node: 'n1', Address: '10.0.0.9' }), 'ok'],
    ['node write does not cover a service', NODE_N1, register({ ...SAME_NODE, Service: { Service: 'web' } }), '403 Permission denied'],
    ['another service needs its own write', WEB, register({ ...SAME_NODE, Service: { Service: 'db' } }), '403 Permission denied'],
    ['overwriting another service\'s ID needs write on that service too', WEB, register({ ...SAME_NODE, Service: { ID: 'db1', Service: 'web' } }), '403 Permission denied'],
    ['a node-level check needs node write', WEB, register({ ...SAME_NODE, Check: { Name: 'c' } }), '403 Permission denied'],
    ['a check on the service being registered is covered by it', WEB, register({ ...SAME_NODE, Service: { ID: 'web3', Service: 'web' }, Check: { Name: 'c', ServiceID: 'web3' } }), 'ok'],
    ['a check on an existing service of the token\'s', WEB, register({ ...SAME_NODE, Check: { Name: 'c', ServiceID: 'WEB1' } }), 'ok'],
    ['a check on someone else\'s service', WEB, register({ ...SAME_NODE, Check: { Name: 'c', ServiceID: 'db1' } }), '403 Permission denied'],
    ['a check for an unknown service', WEB, register({ ...SAME_NODE, Check: { CheckID: 'c1', ServiceID: 'nope' } }), "400 Unknown service 'nope' for check 'c1'"],
    ['a check naming another node', WEB, register({ ...SAME_NODE, Check: { Node: 'n2', Name: 'c', ServiceID: 'web1' } }), '403 Permission denied'],
    ['a proxy needs write on its own name', WEB, register({ ...SAME_NODE, Service: { Service: 'web-proxy', Kind: 'connect-proxy', Proxy: { DestinationServiceName: 'web' } } }), '403 Permission denied'],
    ['…and on its destination', WEB_PREFIX, register({ ...SAME_NODE, Service: { Service: 'web-proxy', Kind: 'connect-proxy', Proxy: { DestinationServiceName: 'db' } } }), '403 Permission denied'],
    ['a proxy with both', WEB_PREFIX, register({ ...SAME_NODE, Service: { Service: 'web-proxy', Kind: 'connect-proxy', Proxy: { DestinationServiceName: 'web' } } }), 'ok'],
    ['the legacy ProxyDestination counts as the destination', WEB_PREFIX, register({ ...SAME_NODE, Service: { Service: 'web-proxy', Kind: 'connect-proxy', ProxyDestination: 'db' } }), '403 Permission denied'],
  ])('%s', (_what, a, cmd, expected) => {
    expect(verdict(a, cmd)).toBe(expected);
  });
});

describe('catalog deregister (ServiceID, then CheckID, else the node)', () => {
  test.each([
    ['a service of the token\'s', WEB, deregister({ Node: 'n1', ServiceID: 'web1' }), 'ok'],
    ['someone else\'s service', WEB, deregister({ Node: 'n1', ServiceID: 'db1' }), '403 Permission denied'],
    ['an unknown service', WEB, deregister({ Node: 'n1', ServiceID: 'nope' }), "400 Unknown service 'nope'"],
    ['a check of the token\'s service', WEB, deregister({ Node: 'n1', CheckID: 'web-check' }), 'ok'],
    ['a check of someone else\'s service', WEB, deregister({ Node: 'n1', CheckID: 'db-check' }), '403 Permission denied'],
    ['a node-level check needs node write', WEB, deregister({ Node: 'n1', CheckID: 'node-check' }), '403 Permission denied'],
    ['a node-level check with node write', NODE_N1, deregister({ Node: 'n1', CheckID: 'node-check' }), 'ok'],
    ['an unknown check', NODE_N1, deregister({ Node: 'n1', CheckID: 'nope' }), "400 Unknown check 'nope'"],
    ['the whole node needs node write', WEB, deregister({ Node: 'n1' }), '403 Permission denied'],
    ['the whole node with node write', NODE_N1, deregister({ Node: 'n1' }), 'ok'],
  ])('%s', (_what, a, cmd, expected) => {
    expect(verdict(a, cmd)).toBe(expected);
  });
});

describe('ACLs disabled', () => {
  test('catalog writes are not checked, so unknown services are no error', () => {
    const store = storeWithNode();
    expect(() => authorizeCommand(deregister({ Node: 'n1', ServiceID: 'nope' }), Authorizer.allowAll(), store, false)).not.toThrow();
  });
});

describe('ACL commands', () => {
  const manage = Authorizer.manage();
  const reader = authz('acl = "read"');
  test.each([
    ['token delete by acl:write', manage, { type: 'acl.token-delete', accessorID: 'x' }, 'ok'],
    ['token delete by acl:read', reader, { type: 'acl.token-delete', accessorID: 'x' }, '403 Permission denied'],
    ['policy create by acl:read', reader, { type: 'acl.policy-create', policy: { ID: 'x', Name: 'x' } }, '403 Permission denied'],
    ['bootstrap by anyone', Authorizer.denyAll(), { type: 'acl.bootstrap', token: { AccessorID: 'a', SecretID: 's', CreateTime: '', Description: '' } }, 'ok'],
    ['the leader-only forms, even by management', manage, { type: 'acl.bootstrap', orCreate: true, token: { AccessorID: 'a', SecretID: 's', CreateTime: '', Description: '' } }, '403 Permission denied'],
    ['built-ins, even by management', manage, { type: 'acl.builtins', createTime: '' }, '403 Permission denied'],
  ])('%s', (_what, a, cmd, expected) => {
    expect(verdict(a, cmd as Parameters<typeof authorizeCommand>[0])).toBe(expected);
  });
});
