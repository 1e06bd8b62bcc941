// `invoicing user create` without --password-stdin prompts on the terminal (deploy/cli/password.ts):
// nothing echoed, typed twice, a mismatch or Ctrl-C refused, no prompt at all without a terminal.
import { PassThrough } from 'node:stream';
import { PasswordInput, readNewPassword } from '../../deploy/cli/password';

function terminal() {
  const input = new PassThrough() as PassThrough & PasswordInput;
  input.isTTY = true;
  const modes: boolean[] = [];
  input.setRawMode = (mode: boolean) => modes.push(mode);
  const output = new PassThrough();
  let shown = '';
  output.on('data', (chunk) => (shown += chunk.toString()));
  return { input, output, modes, shown: () => shown };
}

const typeLater = (input: PassThrough, ...keys: string[]) => {
  let delay = 0;
  for (const key of keys) setTimeout(() => input.write(key), (delay += 5));
};

describe('the password prompt', () => {
  it('reads the password twice in raw mode without echoing it (backspace edits)', async () => {
    const t = terminal();
    typeLater(t.input, 's3cret!x', '\u007f', '\r', 's3cret!', '\r');
    await expect(readNewPassword({}, t.input, t.output)).resolves.toBe('s3cret!');
    expect(t.shown()).toBe('Password: \nRepeat password: \n');
    expect(t.modes).toEqual([true, false, true, false]);
  });

  it('refuses two different passwords', async () => {
    const t = terminal();
    typeLater(t.input, 'one\r', 'two\r');
    await expect(readNewPassword({}, t.input, t.output)).rejects.toThrow('the passwords do not match');
  });

  it('Ctrl-C aborts and leaves the terminal in its normal mode', async () => {
    const t = terminal();
    typeLater(t.input, 'abc\u0003');
    await expect(readNewPassword({}, t.input, t.output)).rejects.toThrow('password prompt aborted');
    expect(t.modes).toEqual([true, false]);
  });

  it('without a terminal there is no prompt: --password-stdin is named', async () => {
    const input = new PassThrough();
    await expect(readNewPassword({}, input)).rejects.toThrow('give it with --password-stdin');
  });
});
