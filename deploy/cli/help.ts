// What `invoicing --help` says beyond the commands: how the CLI finds the system, how it prints.
export const ENVIRONMENT_HELP = `
How it finds the running system:
  embedded (npm start)  DATA_DIR         data directory of the running system (default ./.data); the
                                         service addresses are read from DATA_DIR/runtime.json: Unix
                                         sockets only the user running the system may open (run the CLI
                                         as that user)
  distributed           IDENTITY_ADMIN_ADDR   identity's admin port, host:port (users, workspaces, plans,
                                              tokens); setting it selects the distributed addressing
                        DOCUMENTS_ADMIN_ADDR  documents' admin port, host:port (workspace document-settings)
                        CONTACTS_ADDR         contacts service, host:port (contact suspend, cash-register create)
                        GRPC_TLS_DIR          under mTLS: tls.crt, tls.key, ca.crt of the \`admin\` identity
                        (DOCUMENTS_ADDR, IDENTITY_ADDR: the services' API ports, not used by the CLI —
                        it reaches identity and documents on their admin ports only)

Output:
  Every command prints one JSON object on stdout and exits 0. A failure prints one line on stderr
  ("invoicing: <message>") and exits 1 (2 for a usage error); with --json that line is
  {"error":{"code","message"}}. Codes: the system's refusal (e.g. email_taken), unreachable (an address
  where nothing answers), no_running_system, address_not_set, or the usage mistake (unknown_option, …).

Backup and restore (embedded DATA_DIR only; they read --data-dir, not runtime.json's addresses):
  invoicing backup --data-dir DIR --to NEW_DIR    online copy while the system runs; progress on stderr
  invoicing restore --from BACKUP --data-dir DIR  verifies the backup first; refuses a running system and
                                                  a non-empty DIR (unless --force)
  A distributed system is backed up with its engines' tools (docs/operations.md "Backup and restore").

Passwords are never needed on the command line: "user create" prompts for one on a terminal, or
reads it from standard input with --password-stdin (printf '%s' "$PASSWORD" | invoicing user create …).
`;
