// The error of an archive that is not one, or is damaged (its own file so that the tar reader and
// archive.ts can both raise it without importing each other).

/** An archive that is not one, or is damaged: the reason is one line, fit for a 400. */
export class ArchiveError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArchiveError';
  }
}
