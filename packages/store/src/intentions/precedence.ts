// Intention precedence (Consul's structs.Intention.UpdatePrecedence): the more exact an intention's
// names, the earlier it is evaluated. The destination sets the band (9, 6 or 3), the source's
// number of exact parts takes 0–2 off it, so exact→exact is 9 and *→* (with `*` namespaces) is 1.

export const WILDCARD = '*';

/** 2 for ns/name both exact, 1 for an exact namespace with a wildcard name, 0 for `*`/`*`. */
function exactParts(ns: string, name: string): number {
  if (ns === WILDCARD) return 0;
  return name === WILDCARD ? 1 : 2;
}

export interface IntentionNames {
  SourceNS: string;
  SourceName: string;
  DestinationNS: string;
  DestinationName: string;
}

export function intentionPrecedence(i: IntentionNames): number {
  const band = [3, 6, 9][exactParts(i.DestinationNS, i.DestinationName)]!;
  return band - (2 - exactParts(i.SourceNS, i.SourceName));
}

/** Evaluation order: precedence descending, then the four names ascending (byte order). */
export function compareEvaluationOrder<T extends IntentionNames & { Precedence: number }>(a: T, b: T): number {
  if (a.Precedence !== b.Precedence) return b.Precedence - a.Precedence;
  for (const k of ['SourceNS', 'SourceName', 'DestinationNS', 'DestinationName'] as const) {
    if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  }
  return 0;
}
