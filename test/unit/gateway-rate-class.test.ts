// Rate limits by matched route (docs/edge.md, "Rate limits by route class"): the budget of a request
// is its matched route's declared class, never a pattern over the URL's text. Here: the route table's
// classes, the request-target normalisation every matcher reads, which budget each class charges,
// and — through the gateway's own matchers (the lean lane and the route groups, mounted by
// gateway/routes/mount.ts as the gateway mounts them) — that every spelling of a PDF download reaches
// a PDF route and is charged once, to the PDF class.
import express, { NextFunction, Request, Response } from 'express';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { CredentialType, Principal } from '../../gen/invoicing/identity/v1/identity';
import { PrincipalCache } from '../../gateway/auth/principals';
import { credentialBucket, rateLimiter } from '../../gateway/edge/rate-limit';
import { EdgeConfig } from '../../gateway/edge/config';
import { EdgeState } from '../../gateway/edge/ports/edge-state';
import { LeanLane } from '../../gateway/http/lean-lane';
import { normalizeTarget } from '../../gateway/http/request-target';
import { allRoutes } from '../../gateway/routes';
import { mountRoutes } from '../../gateway/routes/mount';
import { RateClass, rateClassOf } from '../../gateway/routes/route';
import { createLogger } from '../../services/shared/logger';

describe('the route table declares each route its class', () => {
  it('the four PDF downloads are `pdf`, sign-in is `sign_in`, every other route `general`', () => {
    const classes = Object.fromEntries(allRoutes.map((route) => [`${route.method} ${route.path}`, rateClassOf(route)]));
    expect(Object.entries(classes).filter(([, c]) => c === 'pdf').map(([r]) => r).sort()).toEqual(
      ['credit_notes', 'invoices', 'proformas', 'quotes'].map((kind) => `get /accounts/:account_id/${kind}/:id/pdf`),
    );
    expect(Object.entries(classes).filter(([, c]) => c === 'sign_in').map(([r]) => r)).toEqual(['post /auth/sign_in']);
    expect(Object.values(classes).filter((c) => c === 'general')).toHaveLength(allRoutes.length - 5);
  });

  it('every lean route (the lane must know the class from its match) declares a class of its own', () => {
    for (const route of allRoutes.filter((r) => r.lean)) expect(route.rateClass).toBe('pdf');
  });
});

describe('request targets are normalised before any matcher reads them', () => {
  it('cuts a fragment off', () => {
    expect(normalizeTarget('/api/v1/accounts/1/invoices/2/pdf#x')).toBe('/api/v1/accounts/1/invoices/2/pdf');
    expect(normalizeTarget('/a/pdf?disposition=inline#frag')).toBe('/a/pdf?disposition=inline');
    expect(normalizeTarget('/a/pdf#%70')).toBe('/a/pdf');
  });

  it('decodes percent-encoded unreserved characters of the path, either hex case, and nothing else', () => {
    expect(normalizeTarget('/a/%70df')).toBe('/a/pdf');
    expect(normalizeTarget('/a/%70%64%66')).toBe('/a/pdf');
    expect(normalizeTarget('/a/%4A%6a%2D%2e%5F%7E%30')).toBe('/a/Jj-._~0');
    // Reserved and other characters keep their meaning: an encoded slash is not a slash, %25 not a %.
    expect(normalizeTarget('/a/pdf%2F')).toBe('/a/pdf%2F');
    expect(normalizeTarget('/a/%2570df')).toBe('/a/%2570df');
    expect(normalizeTarget('/a/%E0%A4%A/pdf')).toBe('/a/%E0%A4%A/pdf');
    // The query string is its parser's business.
    expect(normalizeTarget('/a/%70df?x=%70')).toBe('/a/pdf?x=%70');
  });

  it('turns an absolute-form target into its origin form', () => {
    expect(normalizeTarget('http://gateway:8080/api/v1/x?y=1')).toBe('/api/v1/x?y=1');
    expect(normalizeTarget('HTTPS://gateway')).toBe('/');
    expect(normalizeTarget('http://gateway?y=1')).toBe('/?y=1');
    expect(normalizeTarget('*')).toBe('*');
  });

  it('leaves the common target as it is (the same string)', () => {
    const target = '/api/v1/accounts/1/invoices/2/pdf?disposition=inline';
    expect(normalizeTarget(target)).toBe(target);
  });
});

const config: EdgeConfig['rateLimit'] = { windowMs: 60_000, general: 300, pdf: 30, anonymous: 100, trustProxy: { trusts: () => false } as never };
const principal = { credential_id: 'key_7', credential_type: CredentialType.CREDENTIAL_TYPE_PERSONAL_ACCESS_TOKEN, scopes: [] } as unknown as Principal;

describe('which budget a class charges', () => {
  it('`pdf` the credential\'s PDF budget, `general` its general budget', () => {
    expect(credentialBucket('pdf', principal, config)).toEqual({ key: 'pdf:key_7', limit: 30 });
    expect(credentialBucket('general', principal, config)).toEqual({ key: 'api:key_7', limit: 300 });
  });

  it('`sign_in` the client address, even for a request carrying a credential this gateway has verified', async () => {
    const keys: string[] = [];
    const state = { hit: async (key: string) => (keys.push(key), { count: 1, resetMs: 1000 }) } as unknown as EdgeState;
    const principals = { cached: () => principal } as unknown as PrincipalCache;
    const limiter = rateLimiter(state, config, createLogger('test'), principals);
    const charge = async (rateClass: RateClass) => {
      const headers: Record<string, string> = {};
      const req = { headers: { authorization: 'Bearer x' }, socket: { remoteAddress: '192.0.2.9' } } as unknown as Request;
      const res = { locals: {}, setHeader: (name: string, value: string) => (headers[name] = value) } as unknown as Response;
      await new Promise<void>((resolve, reject) => limiter.forClass(rateClass)(req, res, (err?: unknown) => (err ? reject(err) : resolve())));
      return headers['X-RateLimit-Limit'];
    };
    expect(await charge('sign_in')).toBe('100');
    expect(await charge('pdf')).toBe('30');
    expect(await charge('general')).toBe('300');
    expect(keys).toEqual(['ip:192.0.2.9', 'pdf:key_7', 'api:key_7']);
  });
});

describe('class selection through the gateway\'s matchers', () => {
  let server: http.Server;
  let port: number;
  const charged: Array<{ rateClass: RateClass; via: string }> = [];

  beforeAll(async () => {
    // The gateway's own mounting (gateway/routes/mount.ts), with a charge step that records its class
    // and whether the lane ran it, and handlers that answer their route's name.
    const chargeFor = (rateClass: RateClass) => (req: Request, _res: Response, next: NextFunction) => {
      charged.push({ rateClass, via: (req as Request & { viaLane?: boolean }).viaLane ? 'lane' : 'express' });
      next();
    };
    const answer = (route: string) => (_req: Request, res: Response) => void res.end(route);
    const lane = new LeanLane((err, _req, res) => void res.end(String(err)));
    const mounted = allRoutes.map((route) => ({ route, handle: answer(`${route.method} ${route.path}`) }));
    const app = express();
    const markLane = (req: Request, _res: Response, next: NextFunction) => {
      (req as Request & { viaLane?: boolean }).viaLane = true;
      next();
    };
    app.use('/api/v1', ...mountRoutes(mounted, { charge: chargeFor, lane, mount: '/api/v1', laneSteps: [markLane] }));
    app.use((_req, res) => void res.status(404).end('none'));
    server = http.createServer((req, res) => {
      req.url = normalizeTarget(req.url ?? '/');
      if (!lane.dispatch(req, res)) app(req, res);
    });
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  /** `method path` with the path sent byte for byte; the route that answered and what was charged. */
  const send = (method: string, path: string) =>
    new Promise<{ answered: string; charged: typeof charged }>((resolve, reject) => {
      charged.length = 0;
      const req = http.request({ host: '127.0.0.1', port, method, path }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ answered: text, charged: [...charged] }));
      });
      req.on('error', reject);
      req.end();
    });

  const pdfRoute = 'get /accounts/:account_id/invoices/:id/pdf';

  it.each([
    ['/api/v1/accounts/1/invoices/2/pdf', 'lane'],
    ['/api/v1/accounts/1/invoices/2/pdf#x', 'lane'],
    ['/api/v1/accounts/1/invoices/2/%70df', 'lane'],
    ['/API/V1/ACCOUNTS/1/INVOICES/2/PDF', 'lane'],
    ['/api/v1/accounts/1/invoices/2/pdf/', 'lane'],
    ['/api/v1/accounts/1/invoices/2/pdf?disposition=inline#x', 'lane'],
    ['http://gateway/api/v1/accounts/1/invoices/2/pdf', 'lane'], // absolute form, in its origin form
  ])('GET %s reaches the PDF route through the %s and is charged once, as pdf', async (path, via) => {
    expect(await send('GET', path)).toEqual({ answered: pdfRoute, charged: [{ rateClass: 'pdf', via }] });
  });

  it.each(['/api/v1/accounts/1/invoices/2/pdf', '/api/v1/accounts/1/invoices/2/pdf#x', '/api/v1/accounts/1/invoices/2/%70df', '/API/V1/accounts/1/invoices/2/pdf/'])(
    'HEAD %s is left to express, reaches the PDF route and is charged once, as pdf',
    async (path) => {
      expect((await send('HEAD', path)).charged).toEqual([{ rateClass: 'pdf', via: 'express' }]);
    },
  );

  it('every spelling of sign-in is charged once, as sign_in', async () => {
    for (const path of ['/api/v1/auth/sign_in#x', '/api/v1/AUTH/SIGN_IN/', '/api/v1/auth/%73ign_in', '/api/v1/auth/sign_in?x#y']) {
      expect({ path, ...(await send('POST', path)) }).toEqual({ path, answered: 'post /auth/sign_in', charged: [{ rateClass: 'sign_in', via: 'express' }] });
    }
  });

  it('OPTIONS, which express answers itself (Allow) for a route path, is charged once, as general — on a route path or not', async () => {
    const onRoute = await send('OPTIONS', '/api/v1/accounts/1/invoices/2/pdf');
    expect(onRoute.answered).toContain('GET');
    expect(onRoute.charged).toEqual([{ rateClass: 'general', via: 'express' }]);
    expect(await send('OPTIONS', '/api/v1/no/such/route')).toEqual({ answered: 'none', charged: [{ rateClass: 'general', via: 'express' }] });
  });

  it('a target that matches no route (double slashes, an encoded slash, a GET of sign-in) is charged once, as general', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/accounts/1//invoices/2/pdf'],
      ['GET', '/api/v1/accounts/1/invoices/2/pdf%2F'],
      ['GET', '/api/v1/auth/sign_in'],
    ]) {
      expect({ path, ...(await send(method, path)) }).toEqual({ path, answered: 'none', charged: [{ rateClass: 'general', via: 'express' }] });
    }
  });
});
