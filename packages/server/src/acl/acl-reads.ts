// ACL read endpoints (spec "ACL tokens" / "ACL policies"): acl:read for everything but `self`,
// unknown objects answer 403 `ACL not found`, and a token's SecretID is `<hidden>` without acl:write.
import { read, type ReadEndpoint } from '../rpc/read-endpoint';
import { forbidden } from '../errors';
import { ACL_NOT_FOUND } from './store-resolver';

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
  'acl.policies': read({
    run: ({ store, authz }) => {
      if (!authz.aclRead()) throw forbidden();
      return store.aclPolicies();
    },
  }),
} satisfies Record<string, ReadEndpoint>;
