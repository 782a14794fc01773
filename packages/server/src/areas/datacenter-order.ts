// Datacenters ordered by estimated round-trip time from this server (consul-behaviour §5.4,
// `GET /v1/catalog/datacenters`): the local one first (no trip at all), then by the median RTT of
// each datacenter's servers; datacenters with no estimate go last; ties by name.

export function orderDatacenters(local: string, rttsByDatacenter: ReadonlyMap<string, readonly number[]>): string[] {
  const median = (xs: readonly number[]): number => {
    if (xs.length === 0) return Number.POSITIVE_INFINITY;
    const s = [...xs].sort((a, b) => a - b);
    const mid = Math.floor(s.length / 2);
    return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  };
  const others = [...rttsByDatacenter.keys()].filter((dc) => dc !== local);
  const keyed = others.map((dc) => ({ dc, rtt: median(rttsByDatacenter.get(dc) ?? []) }));
  keyed.sort((a, b) => (a.rtt === b.rtt ? (a.dc < b.dc ? -1 : a.dc > b.dc ? 1 : 0) : a.rtt < b.rtt ? -1 : 1));
  return [local, ...keyed.map((k) => k.dc)];
}
