// Config tests: the reasons a refused configuration gives.
import { ConfigError } from '@registry/server';

/** The errors of the ConfigError `run` throws; fails the test if it throws anything else or nothing. */
export function errorsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).errors;
  }
  throw new Error('expected a ConfigError');
}
