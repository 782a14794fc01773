// health/service?passing: drop every instance with any check not "passing" (warning and
// maintenance included). Consul removes by swapping the tail into the hole, which reorders the
// survivors; clients see that order, so it is kept.

export function dropNonPassing<T extends { Checks: readonly { Status: string }[] }>(items: readonly T[]): T[] {
  const out = [...items];
  let n = out.length;
  for (let i = 0; i < n; i++) {
    const item = out[i] as T;
    if (item.Checks.some((c) => c.Status !== 'passing')) {
      out[i] = out[n - 1] as T;
      n--;
      i--;
    }
  }
  out.length = n;
  return out;
}
