// The one place a regular expression written by a user is compiled and run: prepared-query
// templates' Regexp, user-event node/service/tag filters, the CLI's filters. The engine is re2js, a
// port of RE2/Go's regexp (docs/dependencies.md): Go's syntax, as Consul's patterns are written
// (`(?P<name>…)`, inline `(?i)`), and matching in time linear in the input, so no pattern can hold
// the event loop (issue 31 finding 1, issue 33 finding 5: `^(a+)+$`, `^(.*){10}Z$` took seconds
// in a backtracking engine). What RE2 cannot run in linear time — backreferences, lookaround — is
// refused when compiled. Nothing else may hand a user's pattern to `RegExp`
// (test/security/regexp-uses.test.ts scans for it).
import type { RE2JS } from 're2js';

type Re2js = typeof import('re2js');
let re2js: Re2js | undefined;

/** The engine is loaded by the first user pattern: ~0.6 MiB of heap an agent without one need not hold (issue #30). */
function engine(): typeof RE2JS {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  re2js ??= require('re2js') as Re2js;
  return re2js.RE2JS;
}

/** The pattern is not valid RE2 syntax; the message is one line naming what is wrong. */
export class UserRegexpError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UserRegexpError';
  }
}

export interface UserRegexp {
  readonly source: string;
  /** Whether the pattern matches anywhere in `input` (Go's MatchString). */
  test(input: string): boolean;
  /** The leftmost match and its groups ('' for a group that did not take part), or null (Go's FindStringSubmatch). */
  exec(input: string): string[] | null;
}

/** Compile a user's pattern; throws UserRegexpError with a one-line reason. */
export function compileUserRegexp(source: string): UserRegexp {
  let re: RE2JS;
  try {
    re = engine().compile(source);
  } catch (err) {
    throw new UserRegexpError(oneLine((err as Error).message));
  }
  return {
    source,
    test: (input) => re.test(input),
    exec: (input) => {
      const m = re.exec(input);
      return m ? Array.from(m, (g: string | undefined) => g ?? '') : null;
    },
  };
}

/** Patterns evaluated again and again (an event's filters at each list) are compiled once. */
const CACHE_LIMIT = 1024;
const cache = new Map<string, UserRegexp | null>();

/** A stored pattern, compiled once and kept; null when it is not valid RE2 (it then matches nothing). */
export function storedUserRegexp(source: string): UserRegexp | null {
  const hit = cache.get(source);
  if (hit !== undefined) return hit;
  let compiled: UserRegexp | null;
  try {
    compiled = compileUserRegexp(source);
  } catch {
    compiled = null;
  }
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(source, compiled);
  return compiled;
}

function oneLine(message: string): string {
  return message.replace(/\s+/g, ' ').trim();
}
