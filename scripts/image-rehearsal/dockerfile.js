// A strict parser of the Dockerfile subset deploy/Dockerfile uses: FROM [AS], ARG, ENV, WORKDIR,
// COPY [--from] [--chown], RUN (shell form), USER, EXPOSE, CMD (exec form). Anything else is refused, so
// a new instruction or flag in the Dockerfile stops the rehearsal instead of being silently skipped.
'use strict';

const INSTRUCTIONS = new Set(['FROM', 'ARG', 'ENV', 'WORKDIR', 'COPY', 'RUN', 'USER', 'EXPOSE', 'CMD']);

/** Logical lines: comments dropped, `\` continuations joined (Docker drops comment lines inside them too). */
function logicalLines(text) {
  const out = [];
  let current = null;
  text.split('\n').forEach((raw, index) => {
    const line = raw.replace(/\r$/, '');
    if (/^\s*#/.test(line) || (current === null && !line.trim())) return;
    const continued = /\\\s*$/.test(line);
    const body = continued ? line.replace(/\\\s*$/, '') : line;
    if (current === null) current = { text: body.trim(), line: index + 1 };
    else current.text += ' ' + body.trim();
    if (!continued) {
      out.push(current);
      current = null;
    }
  });
  if (current !== null) throw new Error(`line ${current.line}: a continuation runs past the end of the file`);
  return out;
}

/** `${NAME}` and `$NAME` from `vars`; an unknown name is an error (a build would expand it to ""). */
function expand(value, vars, where) {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_, a, b) => {
    const name = a ?? b;
    if (!(name in vars)) throw new Error(`${where}: \$${name} is not a declared ARG`);
    return vars[name];
  });
}

/** Splits `--flag=value` options off the front of an instruction's arguments. */
function flags(words, allowed, where) {
  const found = {};
  while (words.length && words[0].startsWith('--')) {
    const m = /^--([a-z-]+)=(.+)$/.exec(words.shift());
    if (!m || !allowed.includes(m[1])) throw new Error(`${where}: unsupported flag ${m ? '--' + m[1] : ''} (the rehearsal knows ${allowed.join(', ')})`);
    found[m[1]] = m[2];
  }
  return found;
}

/** `K=V K2="V 2"` pairs (ENV, ARG). */
function pairs(text, where) {
  const result = [];
  const re = /([A-Za-z_][A-Za-z0-9_]*)(?:=("(?:[^"\\]|\\.)*"|\S*))?(?:\s+|$)/y;
  let m;
  while (re.lastIndex < text.length && (m = re.exec(text))) {
    const value = m[2] === undefined ? undefined : m[2].startsWith('"') ? JSON.parse(m[2]) : m[2];
    result.push([m[1], value]);
  }
  if (re.lastIndex < text.length) throw new Error(`${where}: cannot read "${text}" as NAME=value pairs`);
  return result;
}

/**
 * Parses `text` into `{ globalArgs, stages: [{ name, from, line, instructions: [{ op, line, ... }] }] }`.
 * `buildArgs` override ARG defaults as `docker build --build-arg` would.
 */
function parseDockerfile(text, buildArgs = {}) {
  const globalArgs = {};
  const stages = [];
  for (const { text: body, line } of logicalLines(text)) {
    const m = /^(\S+)\s*(.*)$/.exec(body);
    const op = m[1].toUpperCase();
    const rest = m[2];
    const where = `line ${line} (${op})`;
    if (!INSTRUCTIONS.has(op)) throw new Error(`${where}: instruction not understood by the rehearsal; teach scripts/image-rehearsal about it`);
    const stage = stages[stages.length - 1];
    if (op === 'FROM') {
      const words = rest.split(/\s+/);
      flags(words, [], where);
      if (!(words.length === 1 || (words.length === 3 && words[1].toUpperCase() === 'AS'))) throw new Error(`${where}: expected FROM image [AS name]`);
      stages.push({ name: words[2] ?? String(stages.length), from: expand(words[0], globalArgs, where), line, instructions: [] });
      continue;
    }
    if (op === 'ARG') {
      const [[name, value]] = pairs(rest, where);
      if (!stage) globalArgs[name] = buildArgs[name] ?? value ?? '';
      else stage.instructions.push({ op, line, name, value: buildArgs[name] ?? value ?? globalArgs[name] ?? '' });
      continue;
    }
    if (!stage) throw new Error(`${where}: only ARG may precede the first FROM`);
    if (op === 'ENV') stage.instructions.push({ op, line, vars: Object.fromEntries(pairs(rest, where).map(([k, v]) => [k, v ?? ''])) });
    else if (op === 'WORKDIR' || op === 'USER') stage.instructions.push({ op, line, value: rest.trim() });
    else if (op === 'EXPOSE') stage.instructions.push({ op, line, ports: rest.trim().split(/\s+/) });
    else if (op === 'RUN') {
      if (rest.trim().startsWith('[')) throw new Error(`${where}: the exec form of RUN is not rehearsed`);
      stage.instructions.push({ op, line, command: rest.trim() });
    } else if (op === 'CMD') {
      if (!rest.trim().startsWith('[')) throw new Error(`${where}: only the exec form of CMD is rehearsed`);
      stage.instructions.push({ op, line, argv: JSON.parse(rest) });
    } else if (op === 'COPY') {
      if (rest.trim().startsWith('[')) throw new Error(`${where}: the JSON form of COPY is not rehearsed`);
      const words = rest.trim().split(/\s+/);
      const { from, chown } = flags(words, ['from', 'chown'], where);
      if (words.length < 2) throw new Error(`${where}: COPY needs a source and a destination`);
      const dest = words.pop();
      if (words.some((w) => /[*?[]/.test(w))) throw new Error(`${where}: wildcards in COPY sources are not rehearsed`);
      if (words.length > 1 && !dest.endsWith('/')) throw new Error(`${where}: COPY of several sources needs a destination ending in /`);
      stage.instructions.push({ op, line, from, chown, sources: words, dest });
    }
  }
  return { globalArgs, stages };
}

module.exports = { parseDockerfile };
