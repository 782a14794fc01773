/**
 * A radix tree of compiled rules for one resource (all of a token's `service` and
 * `service_prefix` rules, say). Each node stands for a segment and may hold an exact
 * rule and a prefix rule for it. A lookup walks from the root along the name, so it
 * costs a few map probes and string compares however many rules the token has.
 *
 * Rules are stored as grant masks (see access.ts); NO_RULE marks an empty slot.
 */
import { NO_RULE, WRITE_BIT } from './access';

interface Edge {
  /** Characters consumed by following this edge; never empty. */
  label: string;
  node: TreeNode;
}

class TreeNode {
  exact = NO_RULE;
  prefix = NO_RULE;
  /** Outgoing edges keyed by the first UTF-16 unit of their label. */
  edges: Map<number, Edge> | null = null;
  /** True when every rule at or below this node grants write (for KeyWritePrefix). */
  allWrite = true;
}

function commonLength(a: string, aStart: number, b: string): number {
  const max = Math.min(a.length - aStart, b.length);
  let i = 0;
  while (i < max && a.charCodeAt(aStart + i) === b.charCodeAt(i)) i++;
  return i;
}

function grantsWrite(mask: number): boolean {
  return mask === NO_RULE || (mask & WRITE_BIT) !== 0;
}

export class RuleTree {
  private readonly root = new TreeNode();
  private empty = true;

  /** True when the tree holds no rule, so every lookup falls to the parent. */
  get isEmpty(): boolean {
    return this.empty;
  }

  /** Adds a rule; a second rule for the same slot replaces the first (merge before inserting). */
  insert(segment: string, kind: 'exact' | 'prefix', mask: number): void {
    const node = this.nodeFor(segment);
    if (kind === 'exact') node.exact = mask;
    else node.prefix = mask;
    this.empty = false;
  }

  /** Computes the per-subtree summaries; call once after the last insert. */
  seal(): void {
    const visit = (node: TreeNode): boolean => {
      let all = grantsWrite(node.exact) && grantsWrite(node.prefix);
      if (node.edges) for (const edge of node.edges.values()) all = visit(edge.node) && all;
      node.allWrite = all;
      return all;
    };
    visit(this.root);
  }

  /**
   * The rule that decides `name`: an exact rule for `name` itself, else the prefix
   * rule with the longest segment that `name` starts with, else NO_RULE.
   */
  lookup(name: string): number {
    let node = this.root;
    let depth = 0;
    let found = NO_RULE;
    for (;;) {
      if (depth === name.length) {
        if (node.exact !== NO_RULE) return node.exact;
        return node.prefix !== NO_RULE ? node.prefix : found;
      }
      if (node.prefix !== NO_RULE) found = node.prefix;
      const edge = node.edges?.get(name.charCodeAt(depth));
      if (edge === undefined || !name.startsWith(edge.label, depth)) return found;
      depth += edge.label.length;
      node = edge.node;
    }
  }

  /**
   * For recursive writes under `prefix`: the longest prefix rule on the way to
   * `prefix` (exact rules ignored; NO_RULE if none), and whether every rule for a
   * segment that starts with `prefix` grants write.
   */
  prefixWriteScope(prefix: string): { governing: number; subtreeAllWrite: boolean } {
    let node = this.root;
    let depth = 0;
    let governing = NO_RULE;
    for (;;) {
      if (node.prefix !== NO_RULE) governing = node.prefix;
      if (depth === prefix.length) return { governing, subtreeAllWrite: node.allWrite };
      const edge = node.edges?.get(prefix.charCodeAt(depth));
      if (edge === undefined) return { governing, subtreeAllWrite: true };
      const shared = commonLength(prefix, depth, edge.label);
      if (shared < edge.label.length) {
        // `prefix` ends inside this edge: everything below the edge starts with it.
        const endsInside = depth + shared === prefix.length;
        return { governing, subtreeAllWrite: endsInside ? edge.node.allWrite : true };
      }
      depth += edge.label.length;
      node = edge.node;
    }
  }

  private nodeFor(segment: string): TreeNode {
    let node = this.root;
    let depth = 0;
    while (depth < segment.length) {
      const first = segment.charCodeAt(depth);
      node.edges ??= new Map();
      const edge = node.edges.get(first);
      if (edge === undefined) {
        const leaf = new TreeNode();
        node.edges.set(first, { label: segment.slice(depth), node: leaf });
        return leaf;
      }
      const shared = commonLength(segment, depth, edge.label);
      if (shared < edge.label.length) {
        // Split the edge: a new middle node takes the shared part of the label.
        const middle = new TreeNode();
        const rest = edge.label.slice(shared);
        middle.edges = new Map([[rest.charCodeAt(0), { label: rest, node: edge.node }]]);
        edge.label = edge.label.slice(0, shared);
        edge.node = middle;
      }
      depth += shared;
      node = edge.node;
    }
    return node;
  }
}
