// Runs a command's body and turns what it throws into Consul's one-line error and exit code.
import { ApiError, failure } from './http-client';
import { CliError, ExitCode } from './cli-error';

/** `doing` heads the error line: `Error querying agent: connection refused 127.0.0.1:8500`. */
export async function attempt<T>(doing: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ExitCode || (e instanceof CliError && e.prefixed)) throw e;
    if (e instanceof CliError || e instanceof ApiError || e instanceof Error) throw failure(doing, e);
    throw e;
  }
}

export function usage(message: string): CliError {
  return new CliError(message, 1, true);
}
