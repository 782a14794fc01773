// Hash routes, `#/<dc>/<view>/<rest>`: the page is one static file, so deep links and the back
// button work without the agent knowing the UI's paths.
export interface Route {
  dc: string;
  view: string;
  /** The rest of the path, decoded segment by segment (a KV key keeps its `/`s). */
  rest: string;
}

export const VIEWS = ['services', 'nodes', 'kv', 'intentions', 'acl', 'servers'] as const;

export function parseRoute(hash: string): Route | undefined {
  const path = hash.replace(/^#\/?/, '');
  if (!path) return undefined;
  const parts = path.split('/');
  const dc = safeDecode(parts[0] ?? '');
  const view = parts[1] || 'services';
  const rest = parts.slice(2).map(safeDecode).join('/');
  return dc ? { dc, view, rest } : undefined;
}

export function href(dc: string, view: string, rest = ''): string {
  const tail = rest ? '/' + rest.split('/').map(encodeURIComponent).join('/') : '';
  return `#/${encodeURIComponent(dc)}/${view}${tail}`;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
