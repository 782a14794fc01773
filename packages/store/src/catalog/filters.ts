// The query filters shared by catalog and health reads, and their sort orders (Consul's memdb
// indexes iterate in lower-cased key order).
import { fold } from './keys';

/** Every filter pair must be present with exactly that value (case-sensitive, like Consul). */
export function matchesNodeMeta(meta: Readonly<Record<string, string>> | null, filter: Readonly<Record<string, string>> | undefined): boolean {
  if (!filter) return true;
  for (const [k, v] of Object.entries(filter)) {
    if (meta === null || !Object.prototype.hasOwnProperty.call(meta, k) || meta[k] !== v) return false;
  }
  return true;
}

export function hasNodeMetaFilter(filter: Readonly<Record<string, string>> | undefined): boolean {
  return filter !== undefined && Object.keys(filter).length > 0;
}

/** The instance carries every wanted tag, compared case-insensitively. */
export function hasAllTags(tags: readonly string[], wanted: readonly string[] | undefined): boolean {
  if (!wanted || wanted.length === 0) return true;
  const have = new Set(tags.map(fold));
  return wanted.every((t) => have.has(fold(t)));
}

/**
 * Sort by a list of names, each case-folded, then by the raw names to keep the order total. The
 * names are computed and folded once per item, not once per comparison.
 */
export function sortByNames<T>(items: readonly T[], namesOf: (item: T) => readonly string[]): T[] {
  const decorated = items.map((item) => {
    const names = namesOf(item);
    return { item, folded: names.map(fold).join('\u0000'), raw: names.join('\u0000') };
  });
  decorated.sort((a, b) => {
    if (a.folded !== b.folded) return a.folded < b.folded ? -1 : 1;
    return a.raw === b.raw ? 0 : a.raw < b.raw ? -1 : 1;
  });
  return decorated.map((d) => d.item);
}

/** Compare by a list of names, each case-folded, then by the raw names to keep the order total. */
export function compareNames(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = fold(a[i] ?? '');
    const y = fold(b[i] ?? '');
    if (x !== y) return x < y ? -1 : 1;
  }
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? '';
    const y = b[i] ?? '';
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}
