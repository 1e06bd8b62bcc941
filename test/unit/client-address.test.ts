// The client address of anonymous and invalid-credential requests (docs/edge.md, "Rate limits"):
// the socket's peer unless it is a configured proxy (TRUST_PROXY); then X-Forwarded-For is walked
// from the right past trusted hops.
import type { IncomingMessage } from 'node:http';
import { clientAddress, normalizeAddress, parseTrustProxy } from '../../gateway/edge/client-address';
import { readEdgeConfig } from '../../gateway/edge/config';
import { ConfigError } from '../../services/shared/config';

const request = (peer: string, forwardedFor?: string | string[]) =>
  ({ socket: { remoteAddress: peer }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } }) as unknown as IncomingMessage;

describe('by default no header is believed', () => {
  it('the client is the socket peer, whatever X-Forwarded-For says', () => {
    const { trustProxy } = readEdgeConfig({}).rateLimit;
    expect(clientAddress(request('198.51.100.7', '203.0.113.1'), trustProxy)).toBe('198.51.100.7');
    expect(clientAddress(request('127.0.0.1', '203.0.113.1'), trustProxy)).toBe('127.0.0.1');
  });
});

describe('TRUST_PROXY', () => {
  const trusted = parseTrustProxy('10.0.0.0/8, 192.0.2.1, 2001:db8:1::/48');

  it('walks X-Forwarded-For from the right past trusted hops; the first untrusted one is the client', () => {
    expect(clientAddress(request('10.0.0.5', '203.0.113.9'), trusted)).toBe('203.0.113.9');
    expect(clientAddress(request('10.0.0.5', '1.1.1.1, 203.0.113.9, 192.0.2.1'), trusted)).toBe('203.0.113.9'); // the left part is the client's own
    expect(clientAddress(request('10.0.0.5', ['1.1.1.1, 203.0.113.9', '10.2.3.4']), trusted)).toBe('203.0.113.9'); // several headers
  });

  it('ignores X-Forwarded-For from an untrusted peer', () => {
    expect(clientAddress(request('198.51.100.7', '203.0.113.9'), trusted)).toBe('198.51.100.7');
  });

  it('stops at the last trusted hop when every hop is trusted or a hop is not an address', () => {
    expect(clientAddress(request('10.0.0.5', '10.0.0.6, 10.0.0.7'), trusted)).toBe('10.0.0.6');
    expect(clientAddress(request('10.0.0.5', 'garbage, 10.0.0.7'), trusted)).toBe('10.0.0.7');
    expect(clientAddress(request('10.0.0.5'), trusted)).toBe('10.0.0.5');
  });

  it('understands IPv6, IPv4-mapped peers, ports and brackets', () => {
    expect(clientAddress(request('::ffff:10.0.0.5', '203.0.113.9:4431'), trusted)).toBe('203.0.113.9');
    expect(clientAddress(request('2001:db8:1::2', '[2001:DB8::7]:443'), trusted)).toBe('2001:db8::7');
    expect(normalizeAddress('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(normalizeAddress('not-an-ip')).toBe('');
  });

  it('knows "loopback" and "private"', () => {
    const named = parseTrustProxy('loopback,private');
    for (const proxy of ['127.0.0.1', '::1', '10.1.1.1', '172.20.0.1', '192.168.1.1', 'fd00::1']) {
      expect(clientAddress(request(proxy, '203.0.113.9'), named)).toBe('203.0.113.9');
    }
    expect(clientAddress(request('172.32.0.1', '203.0.113.9'), named)).toBe('172.32.0.1');
  });

  it.each(['10.0.0.0/33', 'proxy.example.com', '10.0.0.1/8/1', '::1/129', '10.0.0.0/x'])('refuses "%s" at start-up', (spec) => {
    expect(() => readEdgeConfig({ TRUST_PROXY: spec })).toThrow(ConfigError);
    expect(() => readEdgeConfig({ TRUST_PROXY: spec })).toThrow(/TRUST_PROXY/);
  });
});

describe('sign-in backoff settings', () => {
  it('default to 5 free attempts, then 1 s doubling up to 15 min, forgotten after an hour', () => {
    expect(readEdgeConfig({}).signIn).toEqual({ freeAttempts: 5, baseLockMs: 1000, maxLockMs: 900_000, forgetMs: 3_600_000 });
  });
});
