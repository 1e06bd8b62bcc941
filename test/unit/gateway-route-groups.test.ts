// The gateway's routes grouped by resource (gateway/http/route-groups.ts): a request is matched only
// against its resource's routes, with express's own semantics — parameters, case-insensitive paths, an
// optional trailing slash, query strings, order within a group, and a 404 fall-through.
import express from 'express';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { RouteGroups } from '../../gateway/http/route-groups';

let server: http.Server;
let base: string;

beforeAll(async () => {
  const groups = new RouteGroups();
  const answer = (name: string) => (req: express.Request, res: express.Response) => void res.json({ name, params: req.params });
  groups.add('get', '/accounts/:account_id/invoices', answer('list invoices'));
  groups.add('get', '/accounts/:account_id/invoices/:id', answer('get invoice'));
  groups.add('get', '/accounts/:account_id/invoices/:id/pdf', answer('invoice pdf'));
  groups.add('get', '/accounts/:account_id/contacts/:id', answer('get contact'));
  groups.add('get', '/user/accounts/:account_id', answer('user account'));
  // Same first segment, a parameter where the resource is: the catch-all group of `x`.
  groups.add('get', '/x/:a/:b', answer('x any'));
  groups.add('post', '/x/:a/:b', answer('x any post'));
  groups.add('get', '/x/:a/lit', answer('x lit'));
  groups.add('get', '/auth/sign_in', answer('sign in'));
  const app = express();
  app.use('/api/v1', groups.handler());
  app.use((_req, res) => void res.status(404).json({ name: 'not found' }));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const get = async (path: string, method = 'GET') => {
  const res = await fetch(base + path, { method });
  return { status: res.status, ...((await res.json()) as { name: string; params?: Record<string, string> }) };
};

describe('routes grouped by resource', () => {
  it('a request reaches its route with its parameters, whatever its group', async () => {
    expect(await get('/accounts/7/invoices/12/pdf')).toEqual({ status: 200, name: 'invoice pdf', params: { account_id: '7', id: '12' } });
    expect(await get('/accounts/7/invoices/12')).toEqual({ status: 200, name: 'get invoice', params: { account_id: '7', id: '12' } });
    expect(await get('/accounts/7/invoices')).toMatchObject({ name: 'list invoices' });
    expect(await get('/accounts/7/contacts/3')).toMatchObject({ name: 'get contact', params: { account_id: '7', id: '3' } });
    expect(await get('/user/accounts/9')).toMatchObject({ name: 'user account', params: { account_id: '9' } });
    expect(await get('/auth/sign_in')).toMatchObject({ name: 'sign in' });
  });

  it('as express matches: any letter case, a trailing slash, a query string', async () => {
    expect(await get('/Accounts/7/INVOICES/12/Pdf')).toMatchObject({ status: 200, name: 'invoice pdf' });
    expect(await get('/accounts/7/invoices/12/pdf/')).toMatchObject({ status: 200, name: 'invoice pdf' });
    expect(await get('/accounts/7/invoices/12/pdf?disposition=inline&x=/a/b')).toMatchObject({ status: 200, name: 'invoice pdf' });
  });

  it("a request its resource's routes do not match goes on to the first segment's catch-all group, then to 404", async () => {
    expect(await get('/x/1/lit')).toMatchObject({ name: 'x lit' });
    expect(await get('/x/1/other')).toMatchObject({ name: 'x any', params: { a: '1', b: 'other' } });
    expect(await get('/x/1/lit', 'POST')).toMatchObject({ name: 'x any post' });
    expect(await get('/accounts/7/invoices/12/pdf/more')).toEqual({ status: 404, name: 'not found' });
    expect(await get('/accounts/7/unknown/1')).toEqual({ status: 404, name: 'not found' });
    expect(await get('/nothing')).toEqual({ status: 404, name: 'not found' });
    expect(await get('/accounts/7/invoices/12', 'DELETE')).toEqual({ status: 404, name: 'not found' });
  });
});
