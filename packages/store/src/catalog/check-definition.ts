// Turning a registration's check into a stored row: Consul's defaults (CheckID from Name, node from
// the request, status critical) and the Definition with its durations in Go's spelling.
import { Rejection } from '../command-error';
import { formatGoDuration, parseGoDuration } from '../go-duration';
import { bool, optObject, str, type PlainObject } from '../input-fields';
import type { CheckDefinitionOut } from './outputs';

export const DEFAULT_CHECK_STATUS = 'critical';

export interface NormalizedCheck {
  /** The node the check names (defaults to the request's node; must match it). */
  readonly node: string;
  readonly CheckID: string;
  readonly Name: string;
  readonly Status: string;
  readonly Notes: string;
  readonly Output: string;
  readonly ServiceID: string;
  readonly Definition: CheckDefinitionOut;
}

function duration(d: PlainObject, key: string, path: string): string | undefined {
  const v = d[key];
  if (v === undefined || v === null || v === '') return undefined;
  let ns: number | undefined;
  if (typeof v === 'number' && Number.isFinite(v)) ns = v;
  else if (typeof v === 'string') ns = parseGoDuration(v);
  if (ns === undefined) throw new Rejection(`Invalid field ${path}.${key}: expected a duration such as "10s"`);
  return ns === 0 ? undefined : formatGoDuration(ns);
}

function headers(d: PlainObject, path: string): Record<string, string[]> | undefined {
  const h = optObject(d.Header, `${path}.Header`);
  if (!h) return undefined;
  const out: Record<string, string[]> = Object.create(null); // header names come from the request
  for (const [name, values] of Object.entries(h)) {
    if (!Array.isArray(values) || !values.every((v) => typeof v === 'string')) {
      throw new Rejection(`Invalid field ${path}.Header.${name}: expected an array of strings`);
    }
    out[name] = [...(values as string[])];
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Only the non-empty fields, as Consul prints them. */
function definition(c: PlainObject, path: string): CheckDefinitionOut {
  const p = `${path}.Definition`;
  const d = optObject(c.Definition, p) ?? {};
  const out: CheckDefinitionOut = {};
  const http = str(d, 'HTTP', p);
  if (http) out.HTTP = http;
  if (bool(d, 'TLSSkipVerify', p)) out.TLSSkipVerify = true;
  const header = headers(d, p);
  if (header) out.Header = header;
  const method = str(d, 'Method', p);
  if (method) out.Method = method;
  const tcp = str(d, 'TCP', p);
  if (tcp) out.TCP = tcp;
  for (const key of ['Interval', 'Timeout', 'DeregisterCriticalServiceAfter'] as const) {
    const text = duration(d, key, p);
    if (text) out[key] = text;
  }
  return out;
}

/** A check of a register request (at `path`, for messages) with its defaults filled in. */
export function normalizeCheck(c: PlainObject, requestNode: string, path: string): NormalizedCheck {
  const name = str(c, 'Name', path);
  const checkId = str(c, 'CheckID', path) || name;
  if (checkId === '') throw new Rejection('Must provide check name or CheckID');
  return {
    node: str(c, 'Node', path) || requestNode,
    CheckID: checkId,
    Name: name,
    Status: str(c, 'Status', path) || DEFAULT_CHECK_STATUS,
    Notes: str(c, 'Notes', path),
    Output: str(c, 'Output', path),
    ServiceID: str(c, 'ServiceID', path),
    Definition: definition(c, path),
  };
}
