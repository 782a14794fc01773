// The CLI's filters (`members -status`, `event -node/-service/-tag`) are compiled by the server
// package's one module for users' regular expressions (RE2, linear time: regexp/user-regexp.ts), so
// the CLI accepts and refuses exactly the patterns the agent does. Loaded only when a filter is given.
interface UserRegexpModule {
  compileUserRegexp(source: string): { test(input: string): boolean };
}

/** A variable specifier: resolved at run time, so the server package is not part of the CLI's build graph here. */
const USER_REGEXP_MODULE = '@registry/server/dist/regexp/user-regexp.js';

/** Compile `source` as RE2; throws with a one-line reason when it is not valid. */
export async function compileUserRegexp(source: string): Promise<{ test(input: string): boolean }> {
  const m = (await import(USER_REGEXP_MODULE)) as UserRegexpModule;
  return m.compileUserRegexp(source);
}
