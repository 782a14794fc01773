// What travels in a frame between two servers.
import type { Message } from '../core/types';

export enum FrameKind {
  Raft = 0,
  Request = 1,
  Response = 2,
}

export interface WireError {
  message: string;
  name: string;
  /** Anything the handler attached to its error as `data` (e.g. the leader's address). */
  data?: unknown;
}

export type Frame =
  /** The third field is the sender's advertised address (sender-address.ts), never its bind address. */
  | [FrameKind.Raft, Message, string]
  | [FrameKind.Request, number, string, unknown]
  | [FrameKind.Response, number, WireError | null, unknown];

export function toWireError(err: unknown): WireError {
  if (err instanceof Error) {
    const data = (err as { data?: unknown }).data;
    return data === undefined ? { message: err.message, name: err.name } : { message: err.message, name: err.name, data };
  }
  return { message: String(err), name: 'Error' };
}
