// The TLS keys of the agent config (Consul 1.4's names): `cert_file`, `key_file`, `ca_file`,
// `ports.https`, `verify_incoming` (both of the next two), `verify_incoming_https`,
// `verify_incoming_rpc`, `verify_outgoing`, `verify_server_hostname`. Paths only: the files are
// read when the agent starts (tls/tls-files.ts), so a config can be validated without them.
type Json = Record<string, any>;

export interface TlsConfig {
  certFile: string | undefined;
  keyFile: string | undefined;
  caFile: string | undefined;
  /** HTTPS API port; -1 (the default) serves no HTTPS. */
  httpsPort: number;
  verifyIncomingHttps: boolean;
  verifyIncomingRpc: boolean;
  verifyOutgoing: boolean;
  verifyServerHostname: boolean;
}

export function defaultTlsConfig(): TlsConfig {
  return {
    certFile: undefined,
    keyFile: undefined,
    caFile: undefined,
    httpsPort: -1,
    verifyIncomingHttps: false,
    verifyIncomingRpc: false,
    verifyOutgoing: false,
    verifyServerHostname: false,
  };
}

/** `file`'s TLS keys onto a copy of `tls`. */
export function applyTlsConfig(tls: TlsConfig, file: Json, source: string): TlsConfig {
  const out = { ...tls };
  for (const [key, field] of [['cert_file', 'certFile'], ['key_file', 'keyFile'], ['ca_file', 'caFile']] as const) {
    const v = file[key];
    if (v === undefined) continue;
    if (typeof v !== 'string' || v === '') throw new Error(`${source}: ${key} must be a file path`);
    out[field] = v;
  }
  const bool = (key: string): boolean | undefined => {
    const v = file[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'boolean') throw new Error(`${source}: ${key} must be true or false`);
    return v;
  };
  const both = bool('verify_incoming');
  if (both !== undefined) out.verifyIncomingHttps = out.verifyIncomingRpc = both;
  out.verifyIncomingHttps = bool('verify_incoming_https') ?? out.verifyIncomingHttps;
  out.verifyIncomingRpc = bool('verify_incoming_rpc') ?? out.verifyIncomingRpc;
  out.verifyOutgoing = bool('verify_outgoing') ?? out.verifyOutgoing;
  out.verifyServerHostname = bool('verify_server_hostname') ?? out.verifyServerHostname;
  const https = (file.ports as Json | undefined)?.https;
  if (https !== undefined) {
    if (typeof https !== 'number' || !Number.isInteger(https) || https < -1 || https > 65535) throw new Error(`${source}: ports.https must be a port, or -1 for none`);
    out.httpsPort = https;
  }
  return out;
}

/** What no TLS setting may be without another (Consul refuses the same at start). */
export function validateTlsConfig(t: TlsConfig): void {
  const needs = (what: string, ...keys: [string, string | undefined][]) => {
    const missing = keys.filter(([, v]) => !v).map(([k]) => k);
    if (missing.length > 0) throw new Error(`${what} needs ${missing.join(' and ')}`);
  };
  if (t.httpsPort >= 0) needs('ports.https', ['cert_file', t.certFile], ['key_file', t.keyFile]);
  if (t.verifyIncomingHttps) needs('verify_incoming_https', ['ca_file', t.caFile], ['ports.https', t.httpsPort >= 0 ? 'set' : undefined]);
  if (t.verifyIncomingRpc || t.verifyOutgoing) {
    needs(t.verifyIncomingRpc ? 'verify_incoming_rpc' : 'verify_outgoing', ['ca_file', t.caFile], ['cert_file', t.certFile], ['key_file', t.keyFile]);
  }
  if (t.verifyServerHostname && !t.verifyOutgoing) throw new Error('verify_server_hostname needs verify_outgoing');
}
