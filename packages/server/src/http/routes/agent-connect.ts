// /v1/agent/connect/* (spec "Mesh agent endpoints"; consul-behaviour §7.1–7.3, 7.5): answered from
// the agent cache (X-Cache, Age), so authorize and roots keep working while servers are unreachable.
import { parseSpiffeURI, SpiffeIdError } from '@registry/ca';
import type { IntentionOut } from '@registry/store';
import { cacheWait as blockingGet, setCacheHeaders } from '../cached-read';
import { decideIntention } from '../../connect/intention-decision';
import { blockOnHash, HASH_QUERY } from '../hash-blocking';
import { contentHash, proxyConfigOf } from '../../local/local-services';
import { compileBody } from '../../schemas/validator';
import { authorizeSchema } from '../../schemas/connect';
import { badRequest, forbidden, notFound } from '../../errors';
import { route, type Route } from '../route';
import type { RouteDeps } from './deps';

export function agentConnectRoutes(deps: RouteDeps): Route<any>[] {
  return [
    route({
      method: 'POST',
      path: '/v1/agent/connect/authorize',
      body: compileBody(authorizeSchema),
      async handle(ctx) {
        const mesh = deps.connect;
        mesh.requireEnabled();
        const { Target, ClientCertURI, ClientCertSerial } = ctx.body;
        if (!Target) throw badRequest('Target service must be specified');
        if (!ClientCertURI) throw badRequest('ClientCertURI must be specified');
        if (!ClientCertSerial) throw badRequest('ClientCertSerial must be specified');
        let id;
        try {
          id = parseSpiffeURI(ClientCertURI);
        } catch (err) {
          if (err instanceof SpiffeIdError) throw badRequest('ClientCertURI not a valid Connect identifier');
          throw err;
        }
        if (id.kind !== 'service') throw badRequest('ClientCertURI not a valid Service identifier');
        if (!mesh.authorizer(ctx.opts.token).serviceWrite(Target)) throw forbidden();

        const roots = await mesh.roots();
        if (id.trustDomain.toLowerCase() !== roots.value.TrustDomain) {
          setCacheHeaders(ctx, roots);
          return { Authorized: false, Reason: `Identity from an external trust domain: ${id.trustDomain}` };
        }
        const matches = await mesh.cachedRead<IntentionOut[]>(
          'intention.check',
          { destination: { namespace: 'default', name: Target } },
          { datacenter: ctx.opts.datacenter, token: ctx.opts.token },
        );
        setCacheHeaders(ctx, matches);
        const d = decideIntention(matches.value, { namespace: id.namespace, name: id.service }, mesh.intentionDefaults());
        return { Authorized: d.allowed, Reason: d.reason };
      },
    }),
    route({
      method: 'GET',
      path: '/v1/agent/connect/ca/roots',
      async handle(ctx) {
        const mesh = deps.connect;
        mesh.requireEnabled();
        const answer = await mesh.roots(blockingGet(ctx));
        setCacheHeaders(ctx, answer);
        ctx.meta.index = answer.index;
        return answer.value;
      },
    }),
    route({
      method: 'GET',
      path: '/v1/agent/connect/ca/leaf{/:service}',
      proxyToken: 'raw',
      async handle(ctx) {
        const mesh = deps.connect;
        mesh.requireEnabled();
        const service = ctx.params.service;
        if (!service) throw badRequest('Missing service name');
        // A managed proxy's own token stands for service:write on the service it fronts.
        const proxy = deps.local.proxyByToken(ctx.opts.token);
        const viaProxy = proxy?.service.Proxy?.DestinationServiceName === service;
        if (!viaProxy && !mesh.authorizer(ctx.opts.token).serviceWrite(service)) throw forbidden();
        const answer = await mesh.leaf(service, blockingGet(ctx));
        setCacheHeaders(ctx, answer);
        ctx.meta.index = answer.value.ModifyIndex;
        return answer.value;
      },
    }),
    route({
      method: 'GET',
      path: '/v1/agent/connect/proxy{/:id}',
      proxyToken: 'raw',
      query: HASH_QUERY,
      async handle(ctx) {
        const mesh = deps.connect;
        const id = ctx.params.id ?? '';
        const current = () => {
          const proxy = deps.local.service(id);
          if (!proxy?.managed) throw notFound(`unknown proxy service ID: ${id}`);
          const target = deps.local.service(proxy.managed.targetId);
          if (!target) throw notFound(`unknown target service ID: ${proxy.managed.targetId}`);
          const config = proxyConfigOf(proxy, target, mesh.bindAddress);
          return { proxy, target, value: { ...config, ContentHash: contentHash(config) } };
        };
        const first = current();
        const isProxyToken = !!ctx.opts.token && ctx.opts.token === first.proxy.managed!.token;
        if (!isProxyToken && !mesh.authorizer(ctx.opts.token).serviceWrite(first.target.service.Service)) throw forbidden();
        return blockOnHash(deps.local, ctx, () => current().value);
      },
    }),
  ];
}
