// The gateway's lean lane (gateway/http/lean-lane.ts): a lean GET route is matched before express with
// express's own routing semantics and run through its steps in order, with what express would have set
// on the request (params, query, baseUrl, originalUrl, url below the mount, res.locals); errors go to
// the error writer; everything the lane does not take is left to express (the next handler here).
import type { NextFunction, Request, Response } from 'express';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { compileTemplate, LeanLane } from '../../gateway/http/lean-lane';
import { normalizeTarget } from '../../gateway/http/request-target';

let server: http.Server;
let base: string;
const seen: string[] = [];

beforeAll(async () => {
  const lane = new LeanLane((err, _req, res) => {
    res.statusCode = 599;
    res.end(JSON.stringify({ by: 'error writer', error: String(err) }));
  });
  const step = (name: string) => (_req: Request, res: Response, next: NextFunction) => {
    seen.push(name);
    res.locals[name] = true;
    next();
  };
  const answer = (req: Request, res: Response) => {
    res.end(
      JSON.stringify({
        by: 'lane',
        params: req.params,
        query: req.query,
        url: req.url,
        baseUrl: req.baseUrl,
        originalUrl: req.originalUrl,
        locals: Object.keys(res.locals),
      }),
    );
  };
  lane.get('/api/v1', '/accounts/:account_id/invoices/:id/pdf', [step('first'), step('second'), answer]);
  lane.get('/api/v1', '/fails/:id', [
    (_req: Request, _res: Response, next: NextFunction) => next(new Error('passed on')),
    answer,
  ]);
  lane.get('/api/v1', '/throws', [
    () => {
      throw new Error('thrown');
    },
  ]);
  lane.get('/api/v1', '/rejects', [async () => Promise.reject(new Error('rejected'))]);
  lane.get('/api/v1', '/falls-through', [step('only')]);
  server = http.createServer((req, res) => {
    if (lane.dispatch(req, res)) return;
    res.setHeader('x-served-by', 'express');
    res.end(JSON.stringify({ by: 'express' }));
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const call = async (path: string, method = 'GET') => {
  const res = await fetch(base + path, { method });
  const text = await res.text();
  return { status: res.status, ...(text ? JSON.parse(text) : {}) };
};

describe('lean lane matching (express routing semantics)', () => {
  it('takes a GET of a lean route, with its parameters, query and mount as express gives them', async () => {
    const res = await call('/api/v1/accounts/7/invoices/42/pdf?disposition=inline&x=1&x=2');
    expect(res).toMatchObject({
      by: 'lane',
      params: { account_id: '7', id: '42' },
      query: { disposition: 'inline', x: ['1', '2'] },
      url: '/accounts/7/invoices/42/pdf?disposition=inline&x=1&x=2',
      baseUrl: '/api/v1',
      originalUrl: '/api/v1/accounts/7/invoices/42/pdf?disposition=inline&x=1&x=2',
    });
  });

  it('matches case-insensitively, with an optional trailing slash, and decodes percent-encoded parameters', async () => {
    expect(await call('/API/V1/Accounts/7/INVOICES/42/PDF')).toMatchObject({ by: 'lane', params: { id: '42' } });
    expect(await call('/api/v1/accounts/7/invoices/42/pdf/')).toMatchObject({ by: 'lane', params: { id: '42' }, query: {} });
    expect(await call('/api/v1/accounts/7/invoices/4%32/pdf')).toMatchObject({ by: 'lane', params: { id: '42' } });
  });

  it('leaves to express: other methods (HEAD too), other paths, invalid percent-encoding', async () => {
    expect(await call('/api/v1/accounts/7/invoices/42/pdf', 'POST')).toEqual({ status: 200, by: 'express' });
    expect((await fetch(`${base}/api/v1/accounts/7/invoices/42/pdf`, { method: 'HEAD' })).headers.get('x-served-by')).toBe('express');
    expect(await call('/api/v1/accounts/7/invoices/42/pdf/extra')).toEqual({ status: 200, by: 'express' });
    expect(await call('/api/v1/accounts/7/invoices/42')).toEqual({ status: 200, by: 'express' });
    expect(await call('/v1/accounts/7/invoices/42/pdf')).toEqual({ status: 200, by: 'express' });
    expect(await call('/api/v1/accounts/7/invoices/%E0%A4%A/pdf')).toEqual({ status: 200, by: 'express' });
  });

  it('compiles a template to a case-insensitive pattern that allows a query and nothing after the path', () => {
    const { pattern, names } = compileTemplate('/api/v1', '/accounts/:account_id/quotes/:id/pdf');
    expect(names).toEqual(['account_id', 'id']);
    expect(pattern.test('/api/v1/accounts/1/quotes/2/pdf?a=b')).toBe(true);
    expect(pattern.test('/api/v1/accounts/1/quotes/2/pdfx')).toBe(false);
    expect(pattern.test('/api/v1/accounts/1/quotes//pdf')).toBe(false);
    expect(pattern.test('/api/v1/accounts/1/quotes/2/3/pdf')).toBe(false);
  });
});

describe('lean lane matching of the normalised target (gateway/http/request-target.ts)', () => {
  // The gateway normalises every target before the lane sees it, so the lane (and the rate class its
  // route declares) is chosen for every spelling of a lean route; the raw spellings alone it leaves to express.
  const { pattern } = compileTemplate('/api/v1', '/accounts/:account_id/invoices/:id/pdf');
  it.each([
    '/api/v1/accounts/1/invoices/2/pdf#x',
    '/api/v1/accounts/1/invoices/2/pdf/#x',
    '/api/v1/accounts/1/invoices/2/%70df',
    '/api/v1/accounts/1/invoices/2/%50%44%46?disposition=inline#x',
    'http://gateway/api/v1/accounts/1/invoices/2/pdf',
  ])('%s: taken once normalised, left to express raw', (target) => {
    expect(pattern.test(normalizeTarget(target))).toBe(true);
    expect(pattern.test(target)).toBe(false);
  });

  it('a target that is no spelling of the route stays unmatched once normalised', () => {
    for (const target of ['/api/v1/accounts/1//invoices/2/pdf', '/api/v1/accounts/1/invoices/2/pdf%2F', '/api/v1/accounts/1/invoices/2/pdfx#x']) {
      expect(pattern.test(normalizeTarget(target))).toBe(false);
    }
  });
});

describe('lean lane steps', () => {
  it('runs the steps in order with fresh res.locals per request', async () => {
    seen.length = 0;
    const first = await call('/api/v1/accounts/1/invoices/2/pdf');
    const second = await call('/api/v1/accounts/1/invoices/3/pdf');
    expect(seen).toEqual(['first', 'second', 'first', 'second']);
    expect(first.locals).toEqual(['first', 'second']);
    expect(second.locals).toEqual(['first', 'second']);
  });

  it('answers an error passed on, thrown, or rejected through the error writer — the later steps never run', async () => {
    expect(await call('/api/v1/fails/1')).toEqual({ status: 599, by: 'error writer', error: 'Error: passed on' });
    expect(await call('/api/v1/throws')).toEqual({ status: 599, by: 'error writer', error: 'Error: thrown' });
    expect(await call('/api/v1/rejects')).toEqual({ status: 599, by: 'error writer', error: 'Error: rejected' });
  });

  it('a chain that ends without an answer is answered as an error, never left hanging', async () => {
    expect(await call('/api/v1/falls-through')).toEqual({ status: 599, by: 'error writer', error: 'Error: no lean step answered the request' });
  });
});
