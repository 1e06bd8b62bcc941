// Boots the rehearsed images as deploy/compose.yaml runs them — its services, their image targets,
// commands and environment — on this machine: each process in its target's /app, as the image's USER
// (uid 1000), with NODE_PATH empty and a clean environment, against the real engines (engines.env); then
// drives a request chain through them and stops them. Compose's host names and fixed ports become loopback
// addresses and free ports (all processes share one host); everything else is compose's.
'use strict';

const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const YAML = require('yaml');

const ENGINE_VARS = ['MONGO_URL', 'REDIS_URL', 'KAFKA_BROKERS', 'MINIO_ENDPOINT', 'MINIO_PORT', 'MINIO_ACCESS_KEY', 'MINIO_SECRET_KEY', 'MINIO_USE_SSL'];

/**
 * A free port below the kernel's ephemeral range: compose's fixed ports must be known before the processes
 * start (every one gets every address), and a port the OS hands out for outgoing connections or `listen(0)`
 * on this busy machine could be taken again before the process binds it.
 */
async function freePort() {
  const [low] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * Math.max(1000, (low || 32768) - 10_000));
    const free = await new Promise((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/** Compose's services that run an image of deploy/Dockerfile, in file order, with target, command and env. */
function composeServices(repo) {
  const compose = YAML.parse(fs.readFileSync(path.join(repo, 'deploy/compose.yaml'), 'utf8'), { merge: true });
  return Object.entries(compose.services)
    .filter(([, s]) => s.build?.dockerfile === 'deploy/Dockerfile')
    .map(([name, s]) => ({
      name,
      target: s.build.target,
      command: s.command,
      dependsOn: Object.keys(s.depends_on ?? {}),
      // A one-off job (others wait for it to complete successfully), not a server.
      job: Object.values(compose.services).some((o) => o.depends_on?.[name]?.condition === 'service_completed_successfully'),
      env: Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, String(v)])),
    }));
}

/** uid and gid of a Dockerfile USER (numeric only: the rehearsal has no image /etc/passwd). */
function userOf(user) {
  const m = /^(\d+)(?::(\d+))?$/.exec(user);
  if (!m) throw new Error(`USER ${user}: the rehearsal runs numeric users only`);
  return { uid: Number(m[1]), gid: Number(m[2] ?? m[1]) };
}

async function bootAndSmoke({ repo, work, stages, log }) {
  const problems = [];
  const result = { processes: {}, smoke: [], notRehearsed: [], problems };
  const missing = ENGINE_VARS.filter((n) => !process.env[n]);
  if (missing.length) {
    problems.push(`boot: real engines not configured (${missing.join(', ')} unset): set -a; . /tmp/shared-engines/engines.env (or scripts/engines.sh start)`);
    return result;
  }
  const services = composeServices(repo);
  const asRoot = process.getuid?.() === 0;
  if (!asRoot) result.notRehearsed.push('the processes run as this user, not the image USER (switching uid needs root)');
  const run = randomBytes(5).toString('hex');
  const dirs = Object.fromEntries(['logs', 'audit', 'tmp', 'home'].map((d) => [d, path.join(work, d)]));
  for (const [name, dir] of Object.entries(dirs)) {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    // The image's /tmp is writable (an emptyDir); its root filesystem, home included, is not.
    fs.chmodSync(dir, name === 'home' ? 0o755 : 0o1777);
  }
  const shared = fs.realpathSync(path.join(repo, 'node_modules'));

  // Compose's addresses (dns:///identity:50051, mongo:27017, …) on this host: a free port per listener.
  const ports = {};
  for (const s of services) {
    if (s.env.GRPC_PORT && !s.job) ports[`${s.name}.grpc`] = await freePort();
    if (s.env.ADMIN_GRPC_PORT) ports[`${s.name}.admin`] = await freePort();
    if (s.env.PORT) ports[`${s.name}.http`] = await freePort();
    ports[`${s.name}.metrics`] = await freePort();
  }
  // compose's ${JWT_SECRET:?…} and the like: secrets of this run.
  const secrets = { jwt: randomBytes(32).toString('base64'), cursor: randomBytes(32).toString('base64'), url: randomBytes(32).toString('base64') };
  const localise = (service, env) => {
    const out = { ...env };
    for (const [key, value] of Object.entries(env)) {
      const m = /^dns:\/\/\/([a-z]+):(\d+)$/.exec(value);
      if (m) out[key] = `127.0.0.1:${ports[`${m[1]}.${m[2] === env.GRPC_PORT ? 'grpc' : 'admin'}`]}`;
    }
    for (const name of ENGINE_VARS) out[name] = process.env[name];
    if (process.env.SMTP_URL && out.SMTP_URL) out.SMTP_URL = process.env.SMTP_URL;
    else delete out.SMTP_URL;
    const mongo = new URL(process.env.MONGO_URL);
    mongo.pathname = `/inv_rehearsal_${run}`;
    Object.assign(out, {
      MONGO_URL: mongo.toString(),
      // Apart from every other system on the shared engines.
      KAFKA_TOPIC_PREFIX: `inv_rehearsal_${run}.`,
      EDGE_REDIS_PREFIX: `inv_rehearsal_${run}:`,
      JWT_SECRET: secrets.jwt,
      CURSOR_SECRET: secrets.cursor,
      URL_SECRET: secrets.url,
      METRICS_PORT: String(ports[`${service}.metrics`]),
    });
    for (const host of ['GRPC_HOST', 'HOST', 'METRICS_HOST']) if (out[host]) out[host] = '127.0.0.1';
    if (out.GRPC_PORT) out.GRPC_PORT = String(ports[`${service}.grpc`] ?? 0);
    if (out.ADMIN_GRPC_PORT) out.ADMIN_GRPC_PORT = String(ports[`${service}.admin`]);
    if (out.PORT) out.PORT = String(ports[`${service}.http`]);
    return out;
  };

  const children = [];
  const killAll = () => children.forEach((c) => c.exitCode === null && c.signalCode === null && c.kill('SIGKILL'));
  process.on('exit', killAll);

  /** Spawns `argv` as the image would: its /app, its USER, the image ENV under compose's environment. */
  const launch = (label, stage, argv, env) => {
    const app = path.join(stage.root, stage.workdir);
    const audit = path.join(dirs.audit, `${label}.jsonl`);
    const fullEnv = {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: dirs.home,
      ...stage.env,
      ...env,
      TMPDIR: dirs.tmp,
      NODE_PATH: '',
      NODE_OPTIONS: `--require ${path.join(__dirname, 'audit.cjs')}`,
      IMAGE_REHEARSAL_APP: app,
      IMAGE_REHEARSAL_FORBIDDEN: [repo, shared].join(path.delimiter),
      IMAGE_REHEARSAL_AUDIT: audit,
    };
    const command = argv[0] === 'node' ? process.execPath : argv[0];
    const child = spawn(command, argv.slice(1), { cwd: app, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'], ...(asRoot ? userOf(stage.user) : {}) });
    children.push(child);
    const logFile = path.join(dirs.logs, `${label}.log`);
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      fs.appendFileSync(logFile, c);
    });
    child.stderr.on('data', (c) => fs.appendFileSync(logFile, c));
    return { child, label, audit, logFile, output: () => out, tail: () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n') : '') };
  };
  const exited = (p) => new Promise((resolve) => (p.child.exitCode !== null ? resolve(p.child.exitCode) : p.child.once('exit', (code) => resolve(code))));
  const ready = (p, ms = 90_000) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${p.label} not ready in ${ms} ms:\n${p.tail()}`)), ms);
      const poll = setInterval(() => {
        if (p.output().includes('{"ready"')) {
          clearTimeout(timer);
          clearInterval(poll);
          resolve();
        }
      }, 100);
      p.child.once('exit', (code) => {
        clearTimeout(timer);
        clearInterval(poll);
        reject(new Error(`${p.label} exited with ${code} before it was ready:\n${p.tail()}`));
      });
    });

  const procs = [];
  // Compose's order: a service starts once the services it depends_on are ready (a command without a
  // listener, init, once it has exited 0); the engines are up already.
  const up = new Map();
  const start = (s) => {
    if (!up.has(s.name)) {
      up.set(
        s.name,
        (async () => {
          await Promise.all(s.dependsOn.map((d) => services.find((x) => x.name === d)).filter(Boolean).map(start));
          const stage = stages[s.target];
          if (!stage) throw new Error(`compose service ${s.name}: target ${s.target} is not a stage of deploy/Dockerfile`);
          const argv = s.command ?? stage.cmd;
          const started = Date.now();
          const p = launch(s.name, stage, argv, localise(s.name, s.env));
          if (s.job) {
            const code = await Promise.race([exited(p), new Promise((r) => setTimeout(() => r('timeout'), 90_000))]);
            if (code !== 0) throw new Error(`${s.name} (${argv.join(' ')}) ended with ${code}:\n${p.tail()}`);
          } else {
            procs.push(p);
            await ready(p);
          }
          result.processes[s.name] = { target: s.target, argv, user: stage.user, ms: Date.now() - started };
          log(`${s.name}: ${s.job ? 'done' : 'ready'} (target ${s.target}, ${argv.join(' ')}, ${(Date.now() - started) / 1000} s)`);
        })(),
      );
    }
    return up.get(s.name);
  };
  try {
    const results = await Promise.allSettled(services.map(start));
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    // Report in compose's order, whatever order they became ready in.
    result.processes = Object.fromEntries(services.map((s) => [s.name, result.processes[s.name]]));
    await require('./smoke').smoke({ services, stages, ports, localise, launch, exited, result, log });
  } catch (error) {
    problems.push(`boot: ${error.message}`);
  } finally {
    await Promise.all(
      [...procs].reverse().map(async (p) => {
        if (p.child.exitCode !== null) return problems.push(`${p.label} exited on its own (${p.child.exitCode}):\n${p.tail()}`);
        const kill = setTimeout(() => p.child.kill('SIGKILL'), 10_000);
        p.child.kill('SIGTERM');
        await exited(p);
        clearTimeout(kill);
      }),
    );
    killAll();
  }
  // Anything a process loaded or read from outside its image.
  for (const file of fs.readdirSync(dirs.audit)) {
    const events = fs.readFileSync(path.join(dirs.audit, file), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
    for (const kind of new Set(events.map((e) => e.kind))) {
      const files = events.filter((e) => e.kind === kind).map((e) => e.file);
      problems.push(`${file.replace(/\.jsonl$/, '')}: ${kind}: ${files.slice(0, 3).join(', ')}${files.length > 3 ? ` and ${files.length - 3} more` : ''}`);
    }
  }
  result.logs = dirs.logs;
  return result;
}

module.exports = { bootAndSmoke, composeServices };
