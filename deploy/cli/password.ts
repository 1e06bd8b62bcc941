// Where `user create` gets a password: never from the command line by necessity (arguments are visible
// in process lists and shell history) — from standard input with --password-stdin (scripts, CI), or
// from a prompt that does not echo when standard input is a terminal.

export interface PasswordInput extends NodeJS.ReadableStream {
  isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
}

/** All of standard input, without the one trailing newline that `echo` or a here-string adds. */
export async function passwordFromStdin(input: NodeJS.ReadableStream = process.stdin): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  const password = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  if (!password) throw new Error('--password-stdin: standard input is empty');
  return password;
}

/** Prompts on the terminal without echo; Ctrl-C or Ctrl-D aborts. */
export function promptPassword(label: string, input: PasswordInput = process.stdin, output: NodeJS.WritableStream = process.stderr): Promise<string> {
  if (!input.isTTY || !input.setRawMode) {
    return Promise.reject(new Error('no password: give it with --password-stdin, or run in a terminal to be prompted'));
  }
  output.write(label);
  input.setRawMode(true);
  input.resume();
  return new Promise((resolve, reject) => {
    let typed = '';
    const done = (error?: Error) => {
      input.setRawMode!(false);
      input.pause();
      input.removeListener('data', onData);
      output.write('\n');
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (chunk: Buffer | string) => {
      for (const char of chunk.toString()) {
        if (char === '\r' || char === '\n') return done();
        if (char === '\u0003' || char === '\u0004') return done(new Error('password prompt aborted'));
        if (char === '\u007f' || char === '\b') typed = typed.slice(0, -1);
        else typed += char;
      }
    };
    input.on('data', onData);
  });
}

/** The password of `user create`: --password-stdin, else a prompt (twice, to catch typos). */
export async function readNewPassword(options: { passwordStdin?: boolean }, input: PasswordInput = process.stdin, output?: NodeJS.WritableStream): Promise<string> {
  if (options.passwordStdin) return passwordFromStdin(input);
  const password = await promptPassword('Password: ', input, output);
  const again = await promptPassword('Repeat password: ', input, output);
  if (password !== again) throw new Error('the passwords do not match');
  if (!password) throw new Error('the password is empty');
  return password;
}
