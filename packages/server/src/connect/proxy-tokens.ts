// Managed proxies' tokens (Consul 1.4's ProxyToken). The agent gives each managed proxy a random
// token; on most endpoints it stands for the token its service was registered with (Consul's
// parseToken → resolveProxyToken → State.ServiceToken), so a proxy can look up its upstreams with
// exactly the rights of whoever registered it. The endpoints that take the proxy token as itself —
// the leaf and the proxy configuration, which check it against the proxy they serve — opt out
// (route `proxyToken: 'raw'`, Consul's parseTokenWithoutResolvingProxyToken).
import type { LocalService } from '../local/local-services';

/**
 * The token a request made with `token` acts with: the proxy's service's registration token when
 * `token` is a managed proxy's, else undefined (not a proxy token: used as given). A service not
 * registered through the API (config file, data dir) acts with the agent's default token, as
 * Consul's ServiceToken falls back to the user token; '' means anonymous.
 */
export function proxyActingToken(
  proxyByToken: (token: string) => LocalService | undefined,
  serviceToken: (serviceId: string) => string | undefined,
  defaultToken: () => string | undefined,
): (token: string) => string | undefined {
  return (token) => {
    const target = proxyByToken(token)?.managed?.targetId;
    if (target === undefined) return undefined;
    return serviceToken(target) ?? defaultToken() ?? '';
  };
}

/** The HTTP edge's proxy-token resolver for an agent's mesh (read at each request: it may be wired later). */
export function proxyTokensOf(
  mesh: () => { proxyByToken(token: string): LocalService | undefined; serviceToken(serviceId: string): string | undefined } | undefined,
  defaultToken: () => string | undefined,
): (token: string) => string | undefined {
  return (token) => {
    const m = mesh();
    return m ? proxyActingToken((t) => m.proxyByToken(t), (id) => m.serviceToken(id), defaultToken)(token) : undefined;
  };
}
