// Prepared-query reads (spec "Prepared queries"; consul-behaviour §4.2–4.7, §2.10). Tokens stored in
// queries are shown only to management tokens (or when ACLs are off); unnamed queries are listed
// only for them. Execute answers the candidates in order, unfiltered by ACLs: the route filters
// them with the query's own Token when it has one, which must never leave the servers.
import { Authorizer } from '@registry/acl';
import type { CheckServiceNodeOut, QueryDefinition, QueryRecord, Store } from '@registry/store';
import { badRequest, forbidden, notFound } from '../errors';
import { REDACTED } from '../queries/definition';
import { filterNodes, orderNear, shuffle } from '../queries/execute';
import { compileTemplate, TemplateError } from '../queries/template';
import { read, type ReadEndpoint } from './read-context';

/** ACLs off is the one resolver that answers the allow-all singleton. */
function aclsOff(authz: Authorizer): boolean {
  return authz === Authorizer.allowAll();
}

function seesTokens(authz: Authorizer): boolean {
  return aclsOff(authz) || authz.isManagement();
}

function redacted<T extends { Token: string }>(q: T, authz: Authorizer): T {
  return q.Token !== '' && !seesTokens(authz) ? { ...q, Token: REDACTED } : q;
}

/**
 * A stored query as the read endpoints show it. The spec lists a `RaftIndex` object
 * ({CreateIndex, ModifyIndex}) in read responses, as Consul's documentation shows; Consul's real
 * output flattens the two indexes, so both forms are sent.
 */
function shown(q: QueryRecord, authz: Authorizer) {
  const out = redacted(q, authz);
  return { ...out, RaftIndex: { CreateIndex: q.CreateIndex, ModifyIndex: q.ModifyIndex } };
}

/** Named queries and templates are governed by query rules on their Name; unnamed ones by their ID. */
function named(q: QueryDefinition): boolean {
  return q.Name !== '' || q.Template.Type !== '';
}

/** The query an execute/explain of `idOrName` runs, rendered when it is a template. */
function resolveRendered(store: Store, idOrName: string, agentSegment: string): { query: QueryDefinition; index: number; keys: string[] } {
  if (idOrName === '') throw badRequest('Missing Query ID');
  const r = store.queryResolve(idOrName);
  const res = r.value;
  if (res.kind === 'none') throw notFound('Query not found');
  if (res.kind === 'template-by-id') throw badRequest('prepared query templates can only be resolved up by name, not by ID');
  const q = res.query;
  const query = res.kind === 'template' ? rendered(q, idOrName, agentSegment) : q;
  return { query, index: r.index, keys: r.keys };
}

/** A template saved before its pattern was checked as RE2 is refused at lookup (400), never a fault. */
function rendered(q: QueryDefinition, name: string, agentSegment: string): QueryDefinition {
  try {
    return compileTemplate(q).render(name, agentSegment);
  } catch (err) {
    if (err instanceof TemplateError) throw badRequest(err.message);
    throw err;
  }
}

export interface ExecuteArgs {
  idOrName: string;
  agentNode: string;
  agentSegment: string;
  /** `?near` as given ('' for none): a node name, `_agent` or `_ip`. */
  near: string;
  /** The request's source IP, for `_ip`. */
  ip: string;
  connect: boolean;
}

export interface ExecuteCandidates {
  /** The rendered query, Token included (for the route's ACL filtering; never sent to clients). */
  query: QueryDefinition;
  nodes: CheckServiceNodeOut[];
}

export const queryReads = {
  'query.list': read({
    blocking: false, // spec: prepared-query reads do not block
    run: ({ store, authz }) => {
      const r = store.queryList();
      const visible = r.value.filter((q: QueryRecord) => (named(q) ? authz.queryRead(q.Name) : seesTokens(authz)));
      return { ...r, value: visible.map((q) => shown(q, authz)) };
    },
  }),
  'query.get': read({
    blocking: false,
    run: ({ store, authz }, a: { id: string }) => {
      const r = store.queryGet(a.id);
      const q = r.value;
      if (q && named(q) && !authz.queryRead(q.Name)) throw forbidden();
      return { ...r, value: q ? [shown(q, authz)] : null };
    },
  }),
  'query.explain': read({
    blocking: false,
    run: ({ store, authz }, a: { idOrName: string; agentSegment: string }) => {
      const { query, index, keys } = resolveRendered(store, a.idOrName, a.agentSegment);
      if (named(query) && !authz.queryRead(query.Name)) throw forbidden();
      return { index, keys, value: { Query: redacted(query, authz) } };
    },
  }),
  'query.execute': read({
    blocking: false,
    run: ({ store }, a: ExecuteArgs) => {
      const { query, keys } = resolveRendered(store, a.idOrName, a.agentSegment);
      const s = query.Service;
      const health = store.healthService(s.Service, { connect: a.connect || s.Connect });
      let nodes = shuffle(filterNodes(s, health.value));
      let near = a.near || s.Near;
      if (near === '_agent') near = a.agentNode;
      if (near === '_ip') near = store.catalogNodes().value.find((n) => n.Address === a.ip)?.Node ?? '';
      if (near) nodes = orderNear(nodes, near, (from, items) => store.sortByDistance(from, items, (n) => n.Node.Node));
      const value: ExecuteCandidates = { query, nodes };
      // Not a blocking endpoint: Consul answers index 0 (sent as 1).
      return { index: 0, keys: [...keys, ...health.keys], value };
    },
  }),
} satisfies Record<string, ReadEndpoint>;
