// Consul serves its API through Go's http.ServeMux, which answers a path that is not canonical —
// `//`, `/./`, `/../` — with a 301 to the cleaned path (net/http cleanPath: path.Clean, the trailing
// slash kept). So `GET /v1/kv//app/x` reads `app/x` there, and `PUT /v1/kv//x` never stores a key
// `/x`; tools that build URLs by joining with '/' (the `crypt` tool) rely on it (issue #29).

/** Go's path.Clean of an absolute path: one slash between elements, no `.`, `..` resolved. */
function goPathClean(p: string): string {
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return `/${out.join('/')}`;
}

/** The canonical form of a request path, or undefined when it already is canonical. */
export function uncleanPathTarget(pathname: string): string | undefined {
  if (!/\/\/|\/\.\.?(\/|$)/.test(pathname)) return undefined;
  let clean = goPathClean(pathname);
  if (pathname.endsWith('/') && clean !== '/') clean += '/';
  return clean === pathname ? undefined : clean;
}
