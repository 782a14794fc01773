import fc from 'fast-check';
import {
  agentURI, formatSpiffeId, parseSpiffeURI, serviceURI, signingURI, SpiffeIdError, trustDomainFor,
} from '@registry/ca';

const TD = '11111111-2222-3333-4444-555555555555.registry';

describe('SPIFFE URI formatting', () => {
  test('the trust domain is the lower-cased cluster id under .registry', () => {
    expect(trustDomainFor('ABCD-ef')).toBe('abcd-ef.registry');
  });

  test('a service URI has the ns/dc/svc path and defaults the namespace to "default"', () => {
    expect(serviceURI(TD, 'dc1', 'web')).toBe(`spiffe://${TD}/ns/default/dc/dc1/svc/web`);
    expect(serviceURI(TD, 'dc2', 'db', 'team')).toBe(`spiffe://${TD}/ns/team/dc/dc2/svc/db`);
  });

  test('an agent URI has the agent/client/dc/id path', () => {
    expect(agentURI(TD, 'dc1', 'node-1')).toBe(`spiffe://${TD}/agent/client/dc/dc1/id/node-1`);
  });

  test('empty segments and bad trust domains are refused when formatting', () => {
    expect(() => serviceURI(TD, 'dc1', '')).toThrow(SpiffeIdError);
    expect(() => serviceURI('bad/td', 'dc1', 'web')).toThrow(SpiffeIdError);
  });
});

describe('SPIFFE URI parsing', () => {
  test('a service URI parses into its parts', () => {
    expect(parseSpiffeURI(`spiffe://${TD}/ns/default/dc/dc1/svc/web`)).toEqual({
      kind: 'service', trustDomain: TD, namespace: 'default', datacenter: 'dc1', service: 'web',
    });
  });

  test('an agent URI parses into its parts', () => {
    expect(parseSpiffeURI(`spiffe://${TD}/agent/client/dc/dc1/id/abc`)).toEqual({
      kind: 'agent', trustDomain: TD, datacenter: 'dc1', nodeId: 'abc',
    });
  });

  test('a bare trust domain is a signing ID, distinct from a service ID', () => {
    expect(parseSpiffeURI(`spiffe://${TD}`)).toEqual({ kind: 'signing', trustDomain: TD });
    expect(parseSpiffeURI(signingURI(TD))).toEqual({ kind: 'signing', trustDomain: TD });
  });

  test('the scheme is case-insensitive', () => {
    expect(parseSpiffeURI(`SPIFFE://${TD}/ns/default/dc/dc1/svc/web`).kind).toBe('service');
  });

  test.each([
    ['another scheme', `https://${TD}/ns/default/dc/dc1/svc/web`],
    ['no trust domain', 'spiffe:///ns/default/dc/dc1/svc/web'],
    ['a port in the authority', `spiffe://${TD}:8080/ns/default/dc/dc1/svc/web`],
    ['a truncated service path', `spiffe://${TD}/ns/default/dc/dc1`],
    ['an extra path segment', `spiffe://${TD}/ns/default/dc/dc1/svc/web/extra`],
    ['an empty segment', `spiffe://${TD}/ns//dc/dc1/svc/web`],
    ['an unknown path', `spiffe://${TD}/foo/bar`],
    ['a query string', `spiffe://${TD}/ns/default/dc/dc1/svc/web?x=1`],
    ['a fragment', `spiffe://${TD}/ns/default/dc/dc1/svc/web#f`],
    ['a broken percent-escape', `spiffe://${TD}/ns/default/dc/dc1/svc/we%zz`],
    ['not a URI at all', 'web'],
    ['the empty string', ''],
  ])('refuses %s with SpiffeIdError', (_what, uri) => {
    expect(() => parseSpiffeURI(uri)).toThrow(SpiffeIdError);
  });

  test('service and agent IDs round-trip through format and parse, whatever their characters', () => {
    const segment = fc.string({ minLength: 1, maxLength: 12 });
    fc.assert(fc.property(segment, segment, segment, segment, (ns, dc, svc, node) => {
      const service = parseSpiffeURI(serviceURI(TD, dc, svc, ns));
      expect(service).toEqual({ kind: 'service', trustDomain: TD, namespace: ns, datacenter: dc, service: svc });
      expect(formatSpiffeId(service)).toBe(serviceURI(TD, dc, svc, ns));
      const agent = parseSpiffeURI(agentURI(TD, dc, node));
      expect(agent).toEqual({ kind: 'agent', trustDomain: TD, datacenter: dc, nodeId: node });
    }), { numRuns: 200 });
  });
});
