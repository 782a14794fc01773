// /v1/acl/* (spec "ACL tokens", "ACL policies"; consul-behaviour §2.3–2.5). Identifiers, secrets
// and CreateTime are made here and travel in the command; the store decides everything that
// depends on its tables. Client errors are 400 (DECISIONS.md); Consul's texts otherwise.
import { checkJsonDepth } from '../json-depth';
import { BOOTSTRAP_TOKEN_DESCRIPTION, generateUUID, uuidError } from '@registry/acl';
import type { BootstrapResult, PolicyLinkInput, TokenOut } from '@registry/store';
import { ACL_NOT_FOUND, isAclNotFound } from '../../acl/store-resolver';
import { cloneSchema, policySchema, tokenSchema, type TokenBody } from '../../schemas/acl';
import { compileBody, type BodyValidator } from '../../schemas/validator';
import { badRequest, forbidden, aclDisabled } from '../../errors';
import { route, type Route, type RouteContext } from '../route';
import { readQuery } from '../../schemas/query-options';
import { Text } from '../../schemas/query-fields';
import { primaryDatacenter, readInto, tokenDatacenter, type RouteDeps } from './deps';

export const ACL_DISABLED = 'ACL support disabled';

const TOKENS_QUERY = readQuery({ policy: Text() });

/** Body decoding here rather than in app.ts, so that "ACLs disabled" answers before any body error. */
function decode<T>(ctx: RouteContext<any, any, any>, validate: BodyValidator<T>, what: string, optional = false): T {
  const text = ctx.rawBody?.toString('utf8') ?? '';
  if (text.trim() === '') {
    if (optional) return validate({});
    throw badRequest(`${what}: EOF`);
  }
  checkJsonDepth(text, what);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw badRequest(`${what}: ${(err as Error).message}`);
  }
  return validate(value);
}

function links(body: TokenBody): PolicyLinkInput[] {
  return (body.Policies ?? []).map((l: { ID?: string | null; Name?: string | null }) => ({ ...(l.ID ? { ID: l.ID } : {}), ...(l.Name ? { Name: l.Name } : {}) }));
}

/** Fields 1.4 tokens may not carry. */
function refuseLegacyFields(body: TokenBody): void {
  if (body.Rules) throw badRequest('Rules cannot be specified for this token');
  if (body.Type) throw badRequest('Type cannot be specified for this token');
}

function createTime(): string {
  return new Date().toISOString();
}

export function aclRoutes(deps: RouteDeps): Route<any>[] {
  const tokenBody = compileBody(tokenSchema, 'Token decoding failed');
  const cloneBody = compileBody(cloneSchema, 'Token decoding failed');
  const policyBody = compileBody(policySchema, 'Policy decoding failed');

  /** ACLs off: every ACL endpoint answers 401 (Consul), before looking at anything else. */
  const enabled = () => {
    if (!deps.rpc.aclResolver.enabled) throw aclDisabled(ACL_DISABLED);
  };
  const apply = (ctx: RouteContext<any, any, any>, cmd: Parameters<RouteDeps['rpc']['apply']>[0], datacenter = ctx.opts.datacenter) =>
    deps.rpc.apply(cmd, { token: ctx.opts.token, datacenter, clientGone: ctx.clientGone });
  /**
   * Policies and global tokens are written in the primary datacenter, whatever `?dc` says (Consul's
   * ACL.PolicySet / TokenSet set args.Datacenter to the ACL datacenter); Local tokens where asked.
   */
  const primary = () => primaryDatacenter(deps);
  /** Token reads in a datacenter without tokens of its own are the primary's (Consul's TokenRead/TokenList). */
  const tokensOf = (ctx: RouteContext<any, any, any>) => {
    ctx.opts.datacenter = tokenDatacenter(deps, ctx.opts.datacenter);
    return ctx;
  };
  /**
   * Where a write to an existing token goes (Consul looks the token up, then forwards): the primary
   * for a global one, here for a Local one. A token this datacenter does not hold answers here for
   * a clone (Consul's TokenClone: `ACL not found`) and goes to the primary for a deletion (`unknown:
   * 'primary'`: Consul 1.7's TokenDelete, "token not found in secondary DC - attempt to delete
   * within the primary"; 1.4–1.6 deleted nothing here and answered success, leaving a global token
   * made a moment earlier, or not replicated for any other reason, alive everywhere).
   */
  const tokenHome = async (ctx: RouteContext<any, any, any>, accessor: string, unknown: 'here' | 'primary' = 'here'): Promise<string> => {
    if (primary() === ctx.opts.datacenter) return ctx.opts.datacenter;
    // A datacenter without tokens of its own sends them all to the primary (Consul's TokenClone/Delete).
    if (tokenDatacenter(deps, ctx.opts.datacenter) !== ctx.opts.datacenter) return primary();
    try {
      const found = await deps.rpc.read('acl.token', { accessor }, { ...ctx.opts, minIndex: 0, consistency: 'stale' });
      return found.result.value && !found.result.value.Local ? primary() : ctx.opts.datacenter;
    } catch (err) {
      // Not held here; or not readable with this token, and then the request's datacenter refuses it.
      return unknown === 'primary' && isAclNotFound(err) ? primary() : ctx.opts.datacenter;
    }
  };

  return [
    route({
      method: 'PUT',
      path: '/v1/acl/bootstrap',
      async handle(ctx) {
        enabled();
        // Needs no token (a stale or unknown one in the client's environment must not get in the way).
        const result = (await deps.rpc.apply(
          {
            type: 'acl.bootstrap',
            token: { AccessorID: generateUUID(), SecretID: generateUUID(), CreateTime: createTime(), Description: BOOTSTRAP_TOKEN_DESCRIPTION },
          },
          { datacenter: ctx.opts.datacenter, clientGone: ctx.clientGone },
        )) as BootstrapResult;
        if ('resetIndex' in result) throw forbidden(`Permission denied: ACL bootstrap no longer allowed (reset index: ${result.resetIndex})`);
        // `ID` repeats the secret, for clients of the legacy API.
        return { ID: result.token.SecretID, ...result.token };
      },
    }),

    // ---- tokens ----
    route({
      method: 'GET',
      path: '/v1/acl/token/self',
      handle(ctx) {
        enabled();
        return readInto(deps, tokensOf(ctx), 'acl.token-self', {});
      },
    }),
    route({
      method: 'GET',
      path: '/v1/acl/token{/:accessor}',
      handle(ctx) {
        enabled();
        const accessor = ctx.params.accessor;
        if (!accessor) throw badRequest('Missing token ID');
        const problem = uuidError(accessor);
        if (problem) throw badRequest(`failed acl token lookup: ${problem}`);
        return readInto(deps, tokensOf(ctx), 'acl.token', { accessor });
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/acl/token{/:accessor}',
      async handle(ctx) {
        enabled();
        const body = decode(ctx, tokenBody, 'Token decoding failed');
        const accessor = ctx.params.accessor ?? '';
        if (body.AccessorID && body.AccessorID !== accessor) throw badRequest('Token Accessor ID in URL and payload do not match');
        refuseLegacyFields(body);
        const fields = { Description: body.Description ?? '', Policies: links(body), Local: body.Local ?? false };
        const home = fields.Local ? ctx.opts.datacenter : primary();
        if (accessor === '') {
          const token = { ...fields, AccessorID: generateUUID(), SecretID: generateUUID(), CreateTime: createTime() };
          return (await apply(ctx, { type: 'acl.token-create', token }, home)) as TokenOut;
        }
        if (uuidError(accessor)) throw badRequest('AccessorID is not a valid UUID');
        const token = { ...fields, AccessorID: accessor, ...(body.SecretID ? { SecretID: body.SecretID } : {}) };
        return (await apply(ctx, { type: 'acl.token-update', token }, home)) as TokenOut;
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/acl/token/:accessor/clone',
      async handle(ctx) {
        enabled();
        const body = decode(ctx, cloneBody, 'Token decoding failed', true);
        const from = ctx.params.accessor;
        const problem = uuidError(from);
        if (problem) throw badRequest(`failed acl token lookup: ${problem}`);
        const token = { AccessorID: generateUUID(), SecretID: generateUUID(), CreateTime: createTime(), Description: body.Description ?? '' };
        const out = (await apply(ctx, { type: 'acl.token-clone', from, token }, await tokenHome(ctx, from))) as TokenOut | null;
        if (out === null) throw forbidden(ACL_NOT_FOUND);
        return out;
      },
    }),
    route({
      method: 'DELETE',
      path: '/v1/acl/token{/:accessor}',
      async handle(ctx) {
        enabled();
        const accessor = ctx.params.accessor;
        if (!accessor) throw badRequest('Missing token ID');
        if (uuidError(accessor)) throw badRequest('Accessor ID is missing or an invalid UUID');
        const home = await tokenHome(ctx, accessor, 'primary');
        // Checked where the deletion happens, as Consul's TokenDelete does on the server it forwarded to.
        if (ctx.opts.token) {
          // A request token that datacenter does not hold (a global one not replicated to it yet,
          // resolved through the primary) is not the token it deletes.
          const own = await deps.rpc.read('acl.token-self', {}, { ...ctx.opts, datacenter: home, minIndex: 0 }).catch((err) => {
            if (isAclNotFound(err)) return null;
            throw err;
          });
          if (own?.result.value?.AccessorID.toLowerCase() === accessor.toLowerCase()) {
            throw badRequest("Deletion of the request's authorization token is not permitted");
          }
        }
        return apply(ctx, { type: 'acl.token-delete', accessorID: accessor }, home);
      },
    }),
    route({
      method: 'GET',
      path: '/v1/acl/tokens',
      query: TOKENS_QUERY,
      handle(ctx) {
        enabled();
        return readInto(deps, tokensOf(ctx), 'acl.tokens', { policy: ctx.query.policy || undefined });
      },
    }),

    // ---- policies ----
    route({
      method: 'GET',
      path: '/v1/acl/policy{/:id}',
      handle(ctx) {
        enabled();
        const id = ctx.params.id;
        if (!id) throw badRequest('Missing policy ID');
        const problem = uuidError(id);
        if (problem) throw badRequest(`failed acl policy lookup: ${problem}`);
        return readInto(deps, ctx, 'acl.policy', { id });
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/acl/policy{/:id}',
      async handle(ctx) {
        enabled();
        const body = decode(ctx, policyBody, 'Policy decoding failed');
        const id = ctx.params.id ?? '';
        if (body.ID && body.ID !== id) throw badRequest('Policy ID in URL and payload do not match');
        const fields = {
          Name: body.Name ?? '',
          Description: body.Description ?? '',
          Rules: body.Rules ?? '',
          Datacenters: body.Datacenters ?? [],
        };
        if (id === '') return apply(ctx, { type: 'acl.policy-create', policy: { ...fields, ID: generateUUID() } }, primary());
        if (uuidError(id)) throw badRequest('Policy ID invalid UUID');
        return apply(ctx, { type: 'acl.policy-update', policy: { ...fields, ID: id } }, primary());
      },
    }),
    route({
      method: 'DELETE',
      path: '/v1/acl/policy{/:id}',
      async handle(ctx) {
        enabled();
        const id = ctx.params.id;
        if (!id) throw badRequest('Missing policy ID');
        const problem = uuidError(id);
        if (problem) throw badRequest(`failed acl policy lookup: ${problem}`);
        return apply(ctx, { type: 'acl.policy-delete', id }, primary());
      },
    }),
    // Consul's ACL.ReplicationStatus: the view of the leader of the asked datacenter (`?dc=`, as any
    // RPC). No token needed (health checks poll it), so none is sent: an unknown one is no refusal.
    route({
      method: 'GET',
      path: '/v1/acl/replication',
      async handle(ctx) {
        enabled();
        return (await deps.rpc.read('acl.replication-status', {}, { ...ctx.opts, token: undefined })).result.value;
      },
    }),
    route({
      method: 'GET',
      path: '/v1/acl/policies',
      handle(ctx) {
        enabled();
        return readInto(deps, ctx, 'acl.policies', {});
      },
    }),
  ];
}
