// The TypeScript client (client/) against the embedded system (its five-minute walk: test/system/readme.test.ts):
// typed errors, cursor iteration, and the reason it exists — a POST whose response is lost (the
// connection drops after the request reached the API) is retried under the same Idempotency-Key and
// creates exactly one invoice.
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { createInvoicingClient, InvoicingApiError, paginate } from '../../client';
import { createWorkspace, Workspace } from '../support/fixtures';
import { startSystem, System } from '../support/system';

let system: System;
let workspace: Workspace;
const api = () => createInvoicingClient({ baseUrl: `${system.baseUrl}/api/v1`, token: workspace.pat, retry: { initialDelayMs: 20 } });

beforeAll(async () => {
  system = await startSystem({ mode: 'embedded' });
  workspace = await createWorkspace(system);
});
afterAll(async () => {
  await system?.stop();
});

async function newPurchaser(client = api(), name = 'Globex s.r.o.', account_id = workspace.id) {
  const { data } = await client.POST('/accounts/{account_id}/contacts', {
    params: { path: { account_id } },
    body: { invoice_account: { name, email: 'accounts@globex.example' } },
  });
  return data!;
}

const lines = [{ name: 'Consulting', quantity: '10', unit_price: '1500.00', vat_rate: '21' }];

describe('client: typed errors', () => {
  it('a refused request rejects with status, code, field and request id', async () => {
    const contact = await newPurchaser();
    const failure = await api()
      .POST('/accounts/{account_id}/invoices', { params: { path: { account_id: workspace.id } }, body: { purchaser_id: contact.invoice_account_id, currency: 'XTS' } })
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(InvoicingApiError);
    expect(failure).toMatchObject({ status: 422, code: 'invalid_currency', field: 'currency', requestId: expect.stringMatching(/^req_/) });
  });
});

describe('client: cursor pages', () => {
  it('iterates over every item of every page, id descending', async () => {
    const client = api();
    const names = ['Page One a.s.', 'Page Two a.s.', 'Page Three a.s.'];
    const created = [];
    for (const name of names) created.push(await newPurchaser(client, name));
    const seen = [];
    for await (const contact of paginate((cursor) =>
      client.GET('/accounts/{account_id}/contacts', { params: { path: { account_id: workspace.id }, query: { q: 'Page ', limit: 2, cursor } } }),
    )) {
      seen.push(contact.id);
    }
    expect(seen).toEqual(created.map((c) => c.id).reverse());
  });
});

/** A loopback proxy to the gateway that forwards the first POST of `path` and then drops the client's
 * connection instead of relaying the answer: the API acted, the client never heard. */
function droppingProxy(target: string, path: RegExp) {
  let dropped = 0;
  const server = http.createServer((req, res) => {
    const upstream = http.request(new URL(req.url!, target), { method: req.method, headers: req.headers }, (answer) => {
      if (req.method === 'POST' && path.test(req.url!) && dropped === 0) {
        dropped++;
        answer.resume();
        req.socket.destroy();
        return;
      }
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    req.pipe(upstream);
  });
  return {
    server,
    dropped: () => dropped,
    listen: () => new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))),
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(resolve);
    }),
  };
}

describe('client: a POST whose answer is lost', () => {
  it('is retried under the same key and creates exactly one invoice', async () => {
    const { id: account_id } = await createWorkspace(system);
    const { token } = await system.cli('token', 'create', '--kind', 'live', '--workspace', String(account_id), '--scopes', 'all');
    const proxy = droppingProxy(system.baseUrl, /\/invoices$/);
    const via = await proxy.listen();
    try {
      const client = createInvoicingClient({ baseUrl: `${via}/api/v1`, token, retry: { initialDelayMs: 20 } });
      const contact = await newPurchaser(createInvoicingClient({ baseUrl: `${system.baseUrl}/api/v1`, token }), 'Globex s.r.o.', account_id);
      const { data: invoice, response } = await client.POST('/accounts/{account_id}/invoices', {
        params: { path: { account_id } },
        body: { purchaser_id: contact.invoice_account_id, line_items: lines },
      });
      expect(proxy.dropped()).toBe(1);
      expect(response.headers.get('idempotent-replayed')).toBe('true');
      const { data: page } = await client.GET('/accounts/{account_id}/invoices', { params: { path: { account_id } } });
      expect(page!.data.map((i) => i.id)).toEqual([invoice!.id]);
    } finally {
      await proxy.close();
    }
  });
});
