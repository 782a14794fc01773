// A failure a command reports to its user: one line on stderr and the exit code (Consul's: 1 for an
// error, 2 where a command gives 2 a meaning, e.g. `intention check` denied, `lock -child-exit-code`).
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
    /** Already says what was being done (`Error querying agent: …`), so it is not wrapped again. */
    readonly prefixed = false,
  ) {
    super(message);
  }
}

/** Ends the command with an exit code and no message (e.g. `intention check` printing "Denied"). */
export class ExitCode extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
  }
}
