// Join addresses as the API takes them (`IP`, `IP:port`, `hostname`, `hostname:port`, `[v6]:port`),
// made into "host:port" with the server RPC port as the default (DECISIONS.md: 8300).

export const DEFAULT_SERVER_PORT = 8300;

/** The dialable "host:port", or an Error describing why the text is not an address. */
export function joinAddress(text: string, defaultPort = DEFAULT_SERVER_PORT): string | Error {
  const t = text.trim();
  if (t === '') return new Error('empty address');
  let host: string;
  let port: string | undefined;
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(t);
  if (v6) {
    host = v6[1];
    port = v6[2];
  } else if ((t.match(/:/g) ?? []).length > 1) {
    host = t; // a bare IPv6 address
  } else {
    const i = t.lastIndexOf(':');
    host = i < 0 ? t : t.slice(0, i);
    port = i < 0 ? undefined : t.slice(i + 1);
  }
  if (host === '' || /\s|\//.test(host)) return new Error(`invalid address "${text}"`);
  let n = defaultPort;
  if (port !== undefined) {
    if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) return new Error(`invalid port in address "${text}"`);
    n = Number(port);
  }
  return host.includes(':') ? `[${host}]:${n}` : `${host}:${n}`;
}
