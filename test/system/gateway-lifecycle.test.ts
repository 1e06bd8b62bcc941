// The gateway's readiness and graceful stop (docs/edge.md "Readiness and drain"): on SIGTERM /readyz
// fails at once, requests keep being served for SHUTDOWN_DRAIN_MS, then the listener closes and the
// requests in flight finish (bounded by SHUTDOWN_TIMEOUT_MS) before the process exits 0. /readyz is
// the gateway's own state: a dead or stalled backend does not take the gateway out of rotation.
// The request in flight across the close is held on the latch the drain itself releases when it
// closes the listener (gateway/edge/test-hooks.ts): no sleeps decide the order.
import { echo, held, latch } from '../api/edge-support';
import { LISTENER_CLOSED_LATCH } from '../../gateway/edge/test-hooks';
import { createWorkspace, Workspace } from '../support/fixtures';
import { startSystem, System } from '../support/system';

async function readyz(baseUrl: string): Promise<{ status: number; body: { status: string; reason?: string } }> {
  const res = await fetch(`${baseUrl}/readyz`);
  return { status: res.status, body: (await res.json()) as { status: string; reason?: string } };
}

/** Polls until the gateway refuses connections (its listener is closed). */
async function refused(baseUrl: string): Promise<boolean> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    try {
      await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(2_000) });
    } catch {
      return true;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

describe('gateway drain on SIGTERM', () => {
  let system: System;
  let ws: Workspace;

  afterEach(async () => {
    await system?.stop();
  });

  it('fails /readyz at once, serves new and in-flight requests through the drain, closes the listener, lets the in-flight one finish, exits 0', async () => {
    system = await startSystem({ mode: 'embedded', env: { EDGE_TEST_HOOKS: '1', SHUTDOWN_DRAIN_MS: '3000' } });
    ws = await createWorkspace(system);
    const base = system.baseUrl;
    expect(await readyz(base)).toEqual({ status: 200, body: { status: 'ready' } });

    const inFlight = echo(base, { token: ws.pat, hold: LISTENER_CLOSED_LATCH });
    await held(base, LISTENER_CLOSED_LATCH);
    const exitCode = system.terminateGateway();

    // Readiness fails first (polled: the signal is delivered asynchronously), while the gateway still answers.
    let ready = await readyz(base);
    while (ready.status === 200) ready = await readyz(base);
    expect(ready).toEqual({ status: 503, body: { status: 'not_ready', reason: 'draining' } });
    expect((await fetch(`${base}/healthz`)).status).toBe(200);

    // A new request during the drain is served, and told to take its next request elsewhere.
    const during = await echo(base, { token: ws.pat });
    expect(during.status).toBe(201);
    expect(during.headers.get('connection')).toBe('close');

    // The held request is released only by the listener closing; it still gets its answer.
    const answered = await inFlight;
    expect(answered.status).toBe(201);
    expect(await exitCode).toBe(0);
    expect(await refused(base)).toBe(true);
  }, 300_000);

  it('waits for in-flight requests only up to SHUTDOWN_TIMEOUT_MS, then exits 0', async () => {
    system = await startSystem({ mode: 'embedded', env: { EDGE_TEST_HOOKS: '1', SHUTDOWN_DRAIN_MS: '0', SHUTDOWN_TIMEOUT_MS: '1000' } });
    ws = await createWorkspace(system);
    const never = latch();
    const stuck = echo(system.baseUrl, { token: ws.pat, hold: never }).then(
      (res) => res.status,
      () => 'connection closed',
    );
    await held(system.baseUrl, never);
    expect(await system.terminateGateway()).toBe(0);
    expect(await stuck).toBe('connection closed');
  }, 300_000);
});

describe('/readyz of a gateway reflects the gateway, not the worst backend', () => {
  let system: System;

  beforeAll(async () => {
    // Its own: it kills and stops services.
    system = await startSystem({ mode: 'distributed', private: true });
  }, 300_000);

  afterAll(async () => {
    system?.signalService('contacts', 'SIGCONT');
    await system?.stop();
  });

  it('stays ready with one backend dead (rendering) and another stalled (contacts, SIGSTOPped); /healthz stays cheap', async () => {
    const ws = await createWorkspace(system);
    await system.killService('rendering');
    system.signalService('contacts', 'SIGSTOP');
    try {
      const started = Date.now();
      expect(await readyz(system.baseUrl)).toEqual({ status: 200, body: { status: 'ready' } });
      expect((await fetch(`${system.baseUrl}/healthz`)).status).toBe(200);
      // Not waiting on any backend: well under the one-second edge-state bound.
      expect(Date.now() - started).toBeLessThan(1_000);
      // The services that are up keep answering through this gateway.
      const me = await fetch(`${system.baseUrl}/api/v1/user`, { headers: { authorization: `Bearer ${ws.pat}` } });
      expect(me.status).toBe(200);
    } finally {
      system.signalService('contacts', 'SIGCONT');
    }
  }, 300_000);
});
