// The legacy ACL API that Consul 1.4 still serves (agent/acl_endpoint_legacy.go, and the rules
// translation of agent/acl_endpoint.go): /v1/acl/create, update, destroy/:id, info/:id, clone/:id,
// list, rules/translate. A legacy token is a token of the 1.4 tables with a Type and Rules
// (store/acl/legacy-handlers.ts); its legacy `ID` is its SecretID. Client errors are 400 with
// Consul's text (where Consul answers 500 for a refused write), as the 1.4 routes (acl.ts).
import { generateUUID, isRootSecret, translateLegacyRules, TranslateError, uuidError, ANONYMOUS_TOKEN_SECRET } from '@registry/acl';
import type { LegacyAclFields } from '@registry/store';
import { resolveToken } from '../../rpc/acl-resolver';
import { ACL_NOT_FOUND } from '../../acl/store-resolver';
import { legacyAclSchema } from '../../schemas/acl';
import { compileBody } from '../../schemas/validator';
import { badRequest, forbidden, aclDisabled, serverError } from '../../errors';
import { route, type Route, type RouteContext } from '../route';
import { checkJsonDepth } from '../json-depth';
import { ACL_DISABLED } from './acl';
import { primaryDatacenter, readInto, type RouteDeps } from './deps';

const TEXT = 'text/plain; charset=utf-8';

export function aclLegacyRoutes(deps: RouteDeps): Route<any>[] {
  const legacyBody = compileBody(
    legacyAclSchema,
    'Request decode failed',
  );
  const enabled = () => {
    if (!deps.rpc.aclResolver.enabled) throw aclDisabled(ACL_DISABLED);
  };
  // Every legacy call goes to the primary datacenter, whatever `?dc` says (Consul's legacy handlers
  // set Datacenter to the ACL datacenter): legacy tokens are global.
  const apply = (ctx: RouteContext<any, any, any>, cmd: Parameters<RouteDeps['rpc']['apply']>[0]) =>
    deps.rpc.apply(cmd, { token: ctx.opts.token, datacenter: primaryDatacenter(deps), clientGone: ctx.clientGone });
  const inPrimary = (ctx: RouteContext<any, any, any>) => {
    ctx.opts.datacenter = primaryDatacenter(deps);
    return ctx;
  };

  /** Consul decodes the body only when there is one; Type defaults to client. */
  const decode = (ctx: RouteContext<any, any, any>): LegacyAclFields => {
    const text = ctx.rawBody?.toString('utf8') ?? '';
    if (text.trim() === '') return { ID: '', Type: 'client' };
    checkJsonDepth(text, 'Request decode failed');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw badRequest(`Request decode failed: ${(err as Error).message}`);
    }
    const b = legacyBody(value);
    return { ID: b.ID ?? '', Name: b.Name ?? '', Type: b.Type || 'client', Rules: b.Rules ?? '' };
  };

  /** Consul's aclSet: create (an ID is optional, one is generated) or update (an ID is required). */
  const set = async (ctx: RouteContext<any, any, any>, update: boolean) => {
    enabled();
    const fields = decode(ctx);
    if (update && fields.ID === '') throw badRequest('ACL ID must be set');
    if (fields.ID === '') fields.ID = generateUUID();
    if (isRootSecret(fields.ID)) throw forbidden('Permission denied: Cannot modify root ACL');
    const ID = (await apply(ctx, {
      type: 'acl.legacy-set',
      acl: { ...fields, AccessorID: generateUUID(), CreateTime: new Date().toISOString() },
    })) as string;
    return { ID };
  };

  /** The id after the route's prefix: Consul takes the rest of the path, so a missing one is a 400. */
  const idOf = (ctx: RouteContext<any, any, any>): string => {
    const id = ctx.params.id ?? '';
    if (id === '') throw badRequest('Missing ACL');
    return id;
  };

  return [
    route({ method: 'PUT', path: '/v1/acl/create', handle: (ctx) => set(ctx, false) }),
    route({ method: 'PUT', path: '/v1/acl/update', handle: (ctx) => set(ctx, true) }),
    route({
      method: 'PUT',
      path: '/v1/acl/destroy{/:id}',
      async handle(ctx) {
        enabled();
        const id = idOf(ctx);
        if (id === ANONYMOUS_TOKEN_SECRET) throw forbidden('Permission denied: Cannot delete anonymous token');
        await apply(ctx, { type: 'acl.legacy-delete', secretID: id });
        return true;
      },
    }),
    route({
      method: 'GET',
      path: '/v1/acl/info{/:id}',
      handle(ctx) {
        enabled();
        return readInto(deps, inPrimary(ctx), 'acl.legacy-info', { id: idOf(ctx) });
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/acl/clone{/:id}',
      async handle(ctx) {
        enabled();
        const id = idOf(ctx);
        const found = await deps.rpc.read('acl.legacy-info', { id }, { ...ctx.opts, datacenter: primaryDatacenter(deps), minIndex: 0 });
        const source = found.result.value[0];
        // Unknown or not a legacy-visible token: Consul cannot tell 404 from 403 here and answers 403.
        if (source === undefined) throw forbidden();
        const ID = (await apply(ctx, {
          type: 'acl.legacy-set',
          acl: { ID: generateUUID(), Name: source.Name, Type: source.Type, Rules: source.Rules, AccessorID: generateUUID(), CreateTime: new Date().toISOString() },
        })) as string;
        return { ID };
      },
    }),
    route({
      method: 'GET',
      path: '/v1/acl/list',
      handle(ctx) {
        enabled();
        return readInto(deps, inPrimary(ctx), 'acl.legacy-list', {});
      },
    }),
    route({
      method: 'POST',
      path: '/v1/acl/rules/translate',
      async handle(ctx) {
        enabled();
        // acl:read only to keep strangers from making the agent translate (Consul's reason).
        const authz = await resolveToken(deps.rpc.aclResolver, ctx.opts.token);
        if (!authz.aclRead()) throw forbidden();
        ctx.meta.raw = { contentType: TEXT, data: translate(ctx.rawBody?.toString('utf8') ?? '', badRequest) };
        return undefined;
      },
    }),
    route({
      method: 'GET',
      path: '/v1/acl/rules/translate{/:accessor}',
      async handle(ctx) {
        enabled();
        const accessor = ctx.params.accessor ?? '';
        if (accessor === '') throw badRequest('Missing token ID');
        const problem = uuidError(accessor);
        if (problem) throw badRequest(`failed acl token lookup: ${problem}`);
        // Consul's ACL.TokenRead by accessor: acl:read, unknown → 403 `ACL not found`.
        const token = await deps.rpc.read('acl.token', { accessor }, { ...ctx.opts, minIndex: 0 });
        const rules = token.result.value?.Rules ?? '';
        if (token.result.value === null) throw forbidden(ACL_NOT_FOUND);
        if (rules === '') throw badRequest('The specified token does not have any rules set');
        ctx.meta.raw = { contentType: TEXT, data: translate(rules, (m) => serverError(`Failed to parse legacy rules: ${m}`)) };
        return undefined;
      },
    }),
  ];
}

function translate(text: string, fail: (message: string) => Error): string {
  try {
    return translateLegacyRules(text);
  } catch (err) {
    if (err instanceof TranslateError) throw fail(err.message);
    throw err;
  }
}
