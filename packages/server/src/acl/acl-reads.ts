// ACL read endpoints (spec "ACL tokens" / "ACL policies"): acl:read for everything but `self`,
// unknown objects answer 403 `ACL not found`, and a token's SecretID is `<hidden>` without acl:write.
import { ANONYMOUS_TOKEN_SECRET, Authorizer } from '@registry/acl';
import { ACL_POLICIES, type PolicyOut } from '@registry/store';
import { read, type ReadEndpoint } from '../rpc/read-endpoint';
import { aclDisabled, forbidden } from '../errors';
import { ACL_NOT_FOUND } from './store-resolver';
import type { GrantedPolicy, TokenGrant } from './token-grant';
import { replicationStatusOf } from './replication-status';

export const HIDDEN_SECRET = '<hidden>';

export const aclReads = {
  'acl.token': read({
    run: ({ store, authz }, a: { accessor: string }) => {
      if (!authz.aclRead()) throw forbidden();
      const r = store.aclToken(a.accessor);
      if (r.value === null) throw forbidden(ACL_NOT_FOUND);
      if (!authz.aclWrite()) r.value.SecretID = HIDDEN_SECRET;
      return r;
    },
  }),
  // Holding the secret is the only privilege needed; without one there is nothing to show.
  'acl.token-self': read({
    run: ({ store, token }) => {
      const r = store.aclTokenBySecret(token ?? '');
      if (r.value === null) throw forbidden(ACL_NOT_FOUND);
      return r;
    },
  }),
  // A client agent resolving a request's token (acl/token-grant.ts). An unknown secret never gets
  // here: the read's own resolution answers 403 `ACL not found` first. Not blocking: the client
  // keeps the answer for acl.token_ttl and asks again.
  'acl.token-resolve': read({
    blocking: false,
    run: ({ store, token, authz }) => {
      // This server has ACLs off (its resolver is the allow-all one): the client is told so.
      if (authz === Authorizer.allowAll()) throw aclDisabled('ACL support disabled');
      const r = store.aclTokenBySecret(token || ANONYMOUS_TOKEN_SECRET);
      // A server's own agent master token is not a datacenter token.
      if (r.value === null) throw forbidden(ACL_NOT_FOUND);
      const policies: GrantedPolicy[] = [];
      let index = r.index;
      const keys = new Set(r.keys);
      for (const link of r.value.Policies ?? []) {
        const p = store.aclPolicy(link.ID);
        index = Math.max(index, p.index);
        for (const k of p.keys) keys.add(k);
        if (p.value) policies.push({ ID: p.value.ID, Rules: p.value.Rules, Datacenters: p.value.Datacenters ?? null });
      }
      const legacy = store.aclLegacyInfo(token || ANONYMOUS_TOKEN_SECRET).value[0];
      const value: TokenGrant = legacy ? { policies, legacy: { Type: legacy.Type, Rules: legacy.Rules } } : { policies };
      return { index, value, keys: [...keys] };
    },
  }),
  // The legacy API's info (Consul's ACL.Get): the ID is the secret, and holding it is all it takes.
  'acl.legacy-info': read({
    run: ({ store }, a: { id: string }) => store.aclLegacyInfo(a.id),
  }),
  // The legacy API's list (Consul's ACL.List): management only.
  'acl.legacy-list': read({
    run: ({ store, authz }) => {
      if (!authz.aclWrite()) throw forbidden();
      return store.aclLegacyList();
    },
  }),
  // All or nothing: no per-token filtering (Consul).
  'acl.tokens': read({
    run: ({ store, authz }, a: { policy?: string }) => {
      if (!authz.aclRead()) throw forbidden();
      return store.aclTokens({ policy: a.policy });
    },
  }),
  'acl.policy': read({
    run: ({ store, authz }, a: { id: string }) => {
      if (!authz.aclRead()) throw forbidden();
      const r = store.aclPolicy(a.id);
      if (r.value === null) throw forbidden(ACL_NOT_FOUND);
      return r;
    },
  }),
  // Replication (acl/acl-replication.ts): a secondary's leader fetches the rows that changed.
  'acl.policy-batch': read({
    blocking: false,
    run: ({ store, authz }, a: { ids: string[] }) => {
      if (!authz.aclRead()) throw forbidden();
      const rows: PolicyOut[] = [];
      let index = 0;
      for (const id of a.ids ?? []) {
        const r = store.aclPolicy(id);
        index = Math.max(index, r.index);
        if (r.value) rows.push(r.value);
      }
      return { index, value: rows, keys: [ACL_POLICIES] };
    },
  }),
  // Whole global tokens, secrets included: acl:write, as Consul's TokenBatchRead without redaction.
  'acl.token-batch': read({
    blocking: false,
    run: ({ store, authz }, a: { accessors: string[] }) => {
      if (!authz.aclWrite()) throw forbidden();
      return store.aclTokenRows(a.accessors ?? []);
    },
  }),
  // GET /v1/acl/replication (Consul's ACL.ReplicationStatus): the leader's own memory, so it is served
  // by the leader of the asked datacenter (replication-status.ts); no token needed (health checks
  // poll it, and it leaks nothing).
  'acl.replication-status': read({
    forward: 'leader',
    blocking: false,
    run: ({ store }) => ({ index: 0, value: replicationStatusOf(store), keys: [] }),
  }),
  'acl.policies': read({
    run: ({ store, authz }) => {
      if (!authz.aclRead()) throw forbidden();
      return store.aclPolicies();
    },
  }),
} satisfies Record<string, ReadEndpoint>;
