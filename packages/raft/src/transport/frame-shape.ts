// What a frame received on the server port must look like before anything acts on it. The port is
// open to whoever can reach it, so a frame is checked here, at the edge (issue 31: garbage, frames
// of the wrong shape, a term that is no number): the Raft core and the handlers then only see
// frames of the shapes wire.ts names. A frame that fails is a reason to close the connection.
import type { Message } from '../core/types';
import { FrameKind, type Frame } from './wire';

const MESSAGE_TYPES = new Set<string>(['prevote', 'prevoteResp', 'vote', 'voteResp', 'append', 'appendResp', 'heartbeat', 'heartbeatResp', 'snapshot', 'timeoutNow', 'readIndex', 'readIndexResp']);
/** Longest method name a request may carry (the real ones are under 40 characters). */
const MAX_METHOD_LENGTH = 128;

const isIndex = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isOptionalIndex = (v: unknown): boolean => v === undefined || isIndex(v);
const isId = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 256;
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function isEntry(v: unknown): boolean {
  return isRecord(v) && isIndex(v.index) && isIndex(v.term) && (v.type === 0 || v.type === 1 || v.type === 2) && v.data instanceof Uint8Array;
}

function isConfiguration(v: unknown): boolean {
  return isRecord(v) && Array.isArray(v.servers) && v.servers.every((s) => isRecord(s) && isId(s.id) && typeof s.address === 'string');
}

/** Why `m` is not a Raft message of one of the known types, or null when it is one. */
export function messageProblem(m: unknown): string | null {
  if (!isRecord(m)) return 'a Raft message that is not a map';
  if (typeof m.type !== 'string' || !MESSAGE_TYPES.has(m.type)) return 'a Raft message of no known type';
  if (!isId(m.from) || !isId(m.to)) return 'a Raft message without from/to ids';
  if (!isIndex(m.term)) return 'a Raft message whose term is not a whole number';
  switch (m.type) {
    case 'prevote':
    case 'vote':
      return isIndex(m.lastIndex) && isIndex(m.lastTerm) ? null : `a ${m.type} without lastIndex/lastTerm`;
    case 'prevoteResp':
    case 'voteResp':
      return typeof m.granted === 'boolean' ? null : `a ${m.type} without granted`;
    case 'append':
      if (!isIndex(m.prevIndex) || !isIndex(m.prevTerm) || !isIndex(m.commit) || !isOptionalIndex(m.seq)) return 'an append without its indexes';
      return Array.isArray(m.entries) && m.entries.every(isEntry) ? null : 'an append whose entries are malformed';
    case 'appendResp':
      return typeof m.success === 'boolean' && isIndex(m.matchIndex) && isIndex(m.hint) && isOptionalIndex(m.seq) && isOptionalIndex(m.lastIndex) ? null : 'a malformed appendResp';
    case 'heartbeat':
      return isIndex(m.commit) && isOptionalIndex(m.ctx) && isOptionalIndex(m.seq) ? null : 'a malformed heartbeat';
    case 'heartbeatResp':
      return isOptionalIndex(m.ctx) && isOptionalIndex(m.seq) && isOptionalIndex(m.lastIndex) ? null : 'a malformed heartbeatResp';
    case 'snapshot':
      return isRecord(m.meta) && isIndex(m.meta.index) && isIndex(m.meta.term) && isConfiguration(m.meta.configuration) ? null : 'a snapshot message with malformed meta';
    case 'readIndex':
      return isIndex(m.ctx) ? null : 'a readIndex without ctx';
    case 'readIndexResp':
      return isIndex(m.ctx) && isIndex(m.index) ? null : 'a malformed readIndexResp';
    default:
      return null; // timeoutNow: the envelope is all it has
  }
}

/**
 * Why `value` is not a frame this end of a connection may receive, or null. An accepted connection
 * receives Raft messages and requests; responses travel the other way.
 */
export function inboundFrameProblem(value: unknown): string | null {
  if (!Array.isArray(value)) return 'a frame that is not an array';
  switch (value[0]) {
    case FrameKind.Raft:
      // Later fields (the sender's address, anything a newer version adds) are the reader's to check.
      return value.length >= 2 ? messageProblem(value[1]) : 'a Raft frame without its message';
    case FrameKind.Request:
      if (value.length !== 4) return 'a request frame of the wrong length';
      if (!isIndex(value[1])) return 'a request without a numeric id';
      if (typeof value[2] !== 'string' || value[2].length === 0 || value[2].length > MAX_METHOD_LENGTH) return 'a request without a method name';
      return null;
    case FrameKind.Response:
      return 'a response on a connection that sent no request';
    default:
      return 'a frame of no known kind';
  }
}

/** A frame that passed inboundFrameProblem, typed. */
export type InboundFrame = Exclude<Frame, [FrameKind.Response, ...unknown[]]>;
