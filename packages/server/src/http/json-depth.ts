// How deeply a request body's JSON may nest. Go's encoding/json stops at 10,000 levels; here the
// parsers (JSON.parse, lossless-json for /v1/txn) and what walks the value afterwards recurse, so
// a body of a few hundred kilobytes of `[` ran out of stack and the answer was the engine's words
// (`Maximum call stack size exceeded`, issue 33 finding 10). No request body the API takes nests
// more than a handful of levels; deeper is refused before parsing, with the limit in the reason.
import { badRequest } from '../errors';

export const MAX_JSON_DEPTH = 256;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/** Throws a 400 `<what>: …` when `text` nests objects/arrays deeper than MAX_JSON_DEPTH (one linear scan). */
export function checkJsonDepth(text: string, what = 'Request decode failed'): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > MAX_JSON_DEPTH) throw badRequest(`${what}: JSON nested more than ${MAX_JSON_DEPTH} levels deep (the limit for request bodies)`);
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
}
