// The one way the UI talks to the agent: same-origin fetch, the datacenter of the current view as
// ?dc=, the stored token as X-Registry-Token, and the agent's one-line reason kept on errors.
import { getToken } from './token-store.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface ApiReply<T> {
  status: number;
  /** X-Registry-Index (0 when absent). */
  index: number;
  /** Undefined when the body is empty, or on an allowed 404. */
  value: T | undefined;
}

export type Params = Record<string, string | undefined>;

export interface RequestOptions {
  params?: Params;
  body?: unknown;
  signal?: AbortSignal;
  /** A 404 is an answer here (an absent KV key or empty folder), not an error. */
  allow404?: boolean;
}

let datacenter = '';

/** The datacenter every request goes to (set by the router from the URL). */
export function setDatacenter(dc: string): void {
  datacenter = dc;
}

export function currentDatacenter(): string {
  return datacenter;
}

/** Each segment of a KV key encoded on its own, so `/` stays a separator. */
export function keyPath(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}

export function apiUrl(path: string, params: Params = {}): string {
  const search = new URLSearchParams();
  if (datacenter) search.set('dc', datacenter);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) search.set(k, v);
  const q = search.toString();
  return q ? `${path}?${q}` : path;
}

export async function request<T>(method: string, path: string, options: RequestOptions = {}): Promise<ApiReply<T>> {
  const headers: Record<string, string> = {};
  const token = getToken();
  if (token) headers['X-Registry-Token'] = token;
  let body: string | undefined;
  if (options.body !== undefined) body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  const res = await fetch(apiUrl(path, options.params), { method, headers, body, signal: options.signal, cache: 'no-store' });
  const text = await res.text();
  const index = Number(res.headers.get('X-Registry-Index') ?? 0) || 0;
  if (res.status === 404 && options.allow404) return { status: 404, index, value: undefined };
  if (!res.ok) throw new ApiError(res.status, `${res.status}: ${text.trim() || res.statusText}`);
  return { status: res.status, index, value: text ? (JSON.parse(text) as T) : undefined };
}

export const get = <T>(path: string, options?: RequestOptions) => request<T>('GET', path, options);
export const put = <T>(path: string, body?: unknown, options?: RequestOptions) => request<T>('PUT', path, { ...options, body });
export const post = <T>(path: string, body?: unknown, options?: RequestOptions) => request<T>('POST', path, { ...options, body });
export const del = <T>(path: string, options?: RequestOptions) => request<T>('DELETE', path, options);
