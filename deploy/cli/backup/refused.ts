// Apart from the rest of backup/: the CLI's error handling needs it in images that carry no SQLite
// driver (the service images run the CLI without better-sqlite3; only the embedded one has it).

/** A refusal of `backup` or `restore`: a code to branch on and a message that says what to do (exit 1). */
export class BackupRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
