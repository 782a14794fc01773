// A KV key as a URL path: each segment escaped, the slashes kept.
export const kvPath = (key: string) => `/v1/kv/${key.split('/').map(encodeURIComponent).join('/')}`;
