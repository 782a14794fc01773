// What Consul's own tools read from /v1/agent/self and /v1/agent/members, in Consul's spelling,
// under `consul_compat` (issue #29). Registry names itself as registry everywhere else; these are the
// places where Consul's tools read the name or the type to decide something:
// - members' Tags.role: `consul members` prints "server" for role `consul` (registry's `registry`
//   showed "unknown");
// - Config.Version / Revision: Nomad and other tools gate features on the Consul version, so the
//   version reported is the Consul API registry implements (registry's own stays in Revision);
// - Stats: `consul info` reads map[string]map[string]string and printed `%!s(float64=…)` for numbers.

/** The Consul release whose HTTP API registry implements (docs/conformance.md). */
export const CONSUL_API_VERSION = '1.4.5';

type Member = { Tags?: Record<string, string> } & Record<string, unknown>;

export function consulMembers<T>(members: readonly T[]): T[] {
  return members.map((m) => {
    const tags = (m as Member).Tags;
    return tags?.role === 'registry' ? ({ ...m, Tags: { ...tags, role: 'consul' } } as T) : m;
  });
}

export function consulSelf(self: Record<string, unknown>): Record<string, unknown> {
  const config = (self.Config ?? {}) as Record<string, unknown>;
  const registryVersion = String(config.Version ?? '');
  const stats = (self.Stats ?? {}) as Record<string, unknown>;
  const member = self.Member as Member | undefined;
  return {
    ...self,
    Config: { ...config, Version: CONSUL_API_VERSION, Revision: `registry-${registryVersion}` },
    ...(member ? { Member: consulMembers([member])[0] } : {}),
    Stats: {
      ...Object.fromEntries(Object.entries(stats).map(([section, values]) => [section, stringValues(values)])),
      build: { prerelease: '', revision: `registry-${registryVersion}`, version: CONSUL_API_VERSION },
    },
  };
}

/** One Stats section as Consul's map[string]string: numbers and booleans as text, anything else as JSON. */
function stringValues(values: unknown): Record<string, string> {
  if (!values || typeof values !== 'object') return {};
  return Object.fromEntries(
    Object.entries(values as Record<string, unknown>).map(([k, v]) => [k, typeof v === 'string' ? v : v === undefined ? '' : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)]),
  );
}
