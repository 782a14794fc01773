// The rules of leader calls that a server's gateway checks for a client's `client.call`
// (endpoints/leader-call-acl.ts): the ones that read their args, and the CSR reading behind
// Connect.Sign, which must find the service the signer would sign and refuse what it cannot read.
import { Authorizer, parseRules } from '@registry/acl';
import { createCSR, serviceURI } from '@registry/ca';
import { csrServices } from '../../src/endpoints/csr-services';
import { leaderCallAllowed } from '../../src/endpoints/leader-call-acl';

const authz = (rules: string) => new Authorizer([parseRules(rules)], 'deny');
const csrFor = (service: string, uri = serviceURI('11111111-2222-3333-4444-555555555555.consul', 'dc1', service)) => createCSR({ uri }).csrPEM;

test('csrServices reads the SPIFFE service of a CSR, and nothing it cannot read as one', () => {
  expect(csrServices(csrFor('web'))).toEqual(['web']);
  expect(csrServices('not a PEM')).toEqual([]);
  // A SPIFFE URI that names no service (the signing identity) is not read as one: refused.
  expect(csrServices(createCSR({ uri: 'spiffe://11111111-2222-3333-4444-555555555555.consul' }).csrPEM)).toBeNull();
});

test('Connect.Sign needs service:write on the CSR\'s service', () => {
  const csrPEM = csrFor('web');
  expect(leaderCallAllowed('Connect.Sign', authz('service "web" { policy = "write" }'), { csrPEM })).toBe(true);
  expect(leaderCallAllowed('Connect.Sign', authz('service "web" { policy = "read" }'), { csrPEM })).toBe(false);
  expect(leaderCallAllowed('Connect.Sign', authz('service "db" { policy = "write" }'), { csrPEM })).toBe(false);
});

test('operator methods need operator rights; client leave operator:write or node:write on that node; bad args are refused', () => {
  expect(leaderCallAllowed('Operator.TransferLeader', authz('operator = "write"'), {})).toBe(true);
  expect(leaderCallAllowed('Operator.TransferLeader', authz('operator = "read"'), {})).toBe(false);
  expect(leaderCallAllowed('Operator.AutopilotHealth', authz('operator = "read"'), {})).toBe(true);
  expect(leaderCallAllowed('Cluster.ClientLeave', authz('node "c0" { policy = "write" }'), { node: 'c0' })).toBe(true);
  expect(leaderCallAllowed('Cluster.ClientLeave', authz('node "c0" { policy = "write" }'), { node: 'c1' })).toBe(false);
  expect(leaderCallAllowed('Cluster.ClientHeartbeat', Authorizer.manage(), null as never)).toBe(false);
  expect(leaderCallAllowed('No.Such' as never, Authorizer.manage(), {} as never)).toBe(false);
  // Session.Renew reads the session's node from a store; a caller without one (a route) is refused.
  expect(leaderCallAllowed('Session.Renew', Authorizer.manage(), { id: 'x' })).toBe(false);
});
