/**
 * A command the state machine refused. `Store.apply` returns it instead of throwing, so every server
 * reaches the same verdict for the same log entry and nothing is left half-applied.
 */
export class CommandError {
  constructor(readonly message: string) {}

  toString(): string {
    return this.message;
  }
}

/**
 * Thrown by validation code (never by mutation code) and turned into a CommandError at the command
 * boundary; it lets deeply nested field checks stop the command with one statement.
 */
export class Rejection extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Rejection';
  }
}
