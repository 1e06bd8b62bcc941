// Spec §4 Contacts, §2 Contact, and the shared pagination rules.
import { Api } from '../support/api';
import { createWorkspace, Workspace } from '../support/fixtures';
import { startSystem, System } from '../support/system';

let system: System;
let api: Api;
let ws: Workspace;
let base: string;

beforeAll(async () => {
  system = await startSystem();
  ws = await createWorkspace(system);
  api = new Api(system.baseUrl, ws.pat);
  base = `/api/v1/accounts/${ws.id}/contacts`;
});
afterAll(() => system?.stop());

const entity = (name: string, extra: Record<string, unknown> = {}) => ({ invoice_account: { name, ...extra } });

describe('POST /accounts/<account_id>/contacts', () => {
  it('creates a contact with an inline legal entity and returns every field', async () => {
    const res = await api.post(base, {
      name: 'Umbrella (our label)',
      invoice_account: {
        name: 'Umbrella Corporation s.r.o.',
        registration_id: '25596641',
        vat_id: 'CZ 25596641',
        email: 'Billing@Umbrella.example',
        phone: '+420 123 456 789',
        address: { street: 'Na Příkopě 1', municipality: 'Praha', postal_code: '11000', country_alpha2: 'CZ' },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Umbrella (our label)',
      suspended: false,
      deleted: null,
      invoice_account: { name: 'Umbrella Corporation s.r.o.', vat_id: 'CZ25596641', email: 'billing@umbrella.example', address: { country_alpha2: 'cz' } },
    });
    expect(res.body.invoice_account_id).toBe(res.body.invoice_account.id);
    expect(res.headers.get('content-type')).toContain('application/json');
  });

  it('creates a contact for an existing legal entity by invoice_account_id', async () => {
    const first = await api.post(base, entity('Shared Entity a.s.'));
    const second = await api.post(base, { name: 'Second label', invoice_account_id: first.body.invoice_account_id });
    expect(second.status).toBe(201);
    expect(second.body.invoice_account.name).toBe('Shared Entity a.s.');
  });

  it('defaults the label to the legal entity name', async () => {
    const res = await api.post(base, entity('Initech LLC'));
    expect(res.body.name).toBe('Initech LLC');
  });

  it('422 for an unknown invoice_account_id, for both forms at once, and for neither', async () => {
    const unknown = await api.post(base, { invoice_account_id: 99999999 });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error).toMatchObject({ code: 'unknown_invoice_account', field: 'invoice_account_id' });
    const both = await api.post(base, { invoice_account_id: 1, invoice_account: { name: 'x' } });
    expect(both.status).toBe(422);
    expect(both.body.error.code).toBe('ambiguous_invoice_account');
    const neither = await api.post(base, { name: 'Lonely' });
    expect(neither.status).toBe(422);
  });

  it('a legal entity of another workspace cannot be referenced (422)', async () => {
    const other = await createWorkspace(system, 'Other');
    const theirs = await api.post(`/api/v1/accounts/${other.id}/contacts`, entity('Their Entity'), { token: other.pat });
    const res = await api.post(base, { invoice_account_id: theirs.body.invoice_account_id });
    expect(res.status).toBe(422);
  });

  it.each([
    [{ invoice_account: { name: 'Bad VAT', vat_id: 'CZ25596642' } }, 'invalid_vat_id', 'invoice_account.vat_id'],
    [{ invoice_account: { name: 'Bad VAT', vat_id: '25596641' } }, 'invalid_vat_id', 'invoice_account.vat_id'],
    [{ invoice_account: { name: 'Bad IČO', registration_id: '25596642', address: { country_alpha2: 'cz' } } }, 'invalid_registration_id', 'invoice_account.registration_id'],
    [{ invoice_account: { name: 'Bad mail', email: 'not-an-address' } }, 'invalid_email', 'invoice_account.email'],
    [{ invoice_account: { name: 'Bad country', address: { country_alpha2: 'xx' } } }, 'invalid_country', 'invoice_account.address.country_alpha2'],
    [{ invoice_account: { vat_id: 'DE136695976' } }, 'missing_field', 'invoice_account.name'],
    [{ invoice_account: { name: 'Typo', vat_number: 'x' } }, 'unknown_field', 'invoice_account.vat_number'],
    [{ name: 42, invoice_account: { name: 'Types' } }, 'invalid_type', 'name'],
    [{ invoice_account_id: 'abc' }, 'invalid_type', 'invoice_account_id'],
  ])('validates what users type: %j → 422 %s', async (body, code, field) => {
    const res = await api.post(base, body);
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code, field });
  });

  it('accepts valid VAT ids of other countries (DE checksum) and foreign registration numbers', async () => {
    const res = await api.post(base, entity('Deutsche Firma GmbH', { vat_id: 'DE136695976', registration_id: 'HRB 12345', address: { country_alpha2: 'de' } }));
    expect(res.status).toBe(201);
  });

  it('400 for malformed JSON; nothing is written', async () => {
    const before = await api.get(`${base}?limit=100`);
    const res = await api.request('POST', base, { rawBody: '{"name": "half', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    const after = await api.get(`${base}?limit=100`);
    expect(after.body.data.length).toBe(before.body.data.length);
  });
});

describe('absent values are null, never the text of a JavaScript value', () => {
  const absentAddress = { name: null, street: null, municipality: null, postal_code: null, contact: null };
  const absentEntity = { registration_id: null, tax_id: null, vat_id: null, email: null, phone: null, postal_address: null };

  it('a partial address is stored and returned with its missing parts null', async () => {
    const res = await api.post(base, { invoice_account: { name: 'A s.r.o.', address: { country_alpha2: 'cz' } } });
    expect(res.status).toBe(201);
    expect(res.body.invoice_account).toEqual(expect.objectContaining({ name: 'A s.r.o.', ...absentEntity, address: { ...absentAddress, country_alpha2: 'cz' } }));
    const read = await api.get(`${base}/${res.body.id}`);
    expect(read.body.invoice_account.address).toEqual({ ...absentAddress, country_alpha2: 'cz' });
    expect(JSON.stringify(read.body)).not.toContain('undefined');
    // Nothing stored as "undefined" either: a search for it finds nothing.
    const search = await api.get(`${base}?q=undefined`);
    expect(search.body.data.map((c: { id: number }) => c.id)).not.toContain(res.body.id);
  });

  it('an address without a country has a null country; null and "" parts are absent too', async () => {
    const res = await api.post(base, { invoice_account: { name: 'B s.r.o.', postal_address: { street: 'Dlouhá 5', municipality: null, postal_code: '' } } });
    expect(res.status).toBe(201);
    expect(res.body.invoice_account.postal_address).toEqual({ ...absentAddress, street: 'Dlouhá 5', country_alpha2: null });
    expect(res.body.invoice_account.address).toBeNull();
  });

  it('PATCH with a partial address replaces the address and leaves no "undefined" behind', async () => {
    const created = await api.post(base, entity('C s.r.o.', { address: { street: 'Krátká 1', municipality: 'Brno', country_alpha2: 'cz' } }));
    const res = await api.patch(`${base}/${created.body.id}`, { invoice_account: { address: { municipality: 'Praha' } } });
    expect(res.status).toBe(200);
    expect(res.body.invoice_account.address).toEqual({ ...absentAddress, municipality: 'Praha', country_alpha2: null });
    const cleared = await api.patch(`${base}/${created.body.id}`, { invoice_account: { address: { street: null, country_alpha2: '' } } });
    expect(cleared.body.invoice_account.address).toBeNull();
  });

  it('clearing an optional string of the legal entity ("") returns null', async () => {
    const created = await api.post(base, entity('D s.r.o.', { email: 'ap@d.example', tax_id: 'T-1' }));
    expect(created.body.invoice_account).toMatchObject({ email: 'ap@d.example', tax_id: 'T-1' });
    const res = await api.patch(`${base}/${created.body.id}`, { invoice_account: { email: '', tax_id: '' } });
    expect(res.body.invoice_account).toMatchObject({ email: null, tax_id: null });
  });
});

describe('GET /accounts/<account_id>/contacts/<id>', () => {
  it('reads one contact; 404 for unknown and non-numeric ids', async () => {
    const created = await api.post(base, entity('Readable Ltd'));
    const res = await api.get(`${base}/${created.body.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created.body);
    expect((await api.get(`${base}/99999999`)).status).toBe(404);
    expect((await api.get(`${base}/abc`)).status).toBe(404);
    expect((await api.get(`${base}/99999999999999999999`)).status).toBe(404);
  });
});

describe('PATCH /accounts/<account_id>/contacts/<id>', () => {
  it('updates the label and the linked legal entity', async () => {
    const created = await api.post(base, entity('Old Name Ltd'));
    const res = await api.patch(`${base}/${created.body.id}`, { name: 'New label', invoice_account: { email: 'ap@new.example', name: 'New Name Ltd' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'New label', invoice_account: { name: 'New Name Ltd', email: 'ap@new.example' } });
    expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.body.updated_at));
    const found = await api.get(`${base}?q=new%20name`);
    expect(found.body.data.map((c: { id: number }) => c.id)).toContain(created.body.id);
  });

  it('403 for a suspended contact', async () => {
    const created = await api.post(base, entity('Suspended Ltd'));
    await system.cli('contact', 'suspend', '--workspace', String(ws.id), '--contact', String(created.body.id));
    const res = await api.patch(`${base}/${created.body.id}`, { name: 'nope' });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('contact_suspended');
    expect((await api.get(`${base}/${created.body.id}`)).body).toMatchObject({ suspended: true, name: 'Suspended Ltd' });
  });

  it('404 for an unknown contact; 422 for invalid values', async () => {
    expect((await api.patch(`${base}/99999999`, { name: 'x' })).status).toBe(404);
    const created = await api.post(base, entity('Valid Ltd'));
    const res = await api.patch(`${base}/${created.body.id}`, { invoice_account: { vat_id: 'CZ00000000' } });
    expect(res.status).toBe(422);
    expect((await api.patch(`${base}/${created.body.id}`, { invoice_account_id: 99999999 })).status).toBe(422);
  });
});

describe('DELETE /accounts/<account_id>/contacts/<id>', () => {
  it('soft-deletes: 204, then excluded from lists and 404 by id', async () => {
    const created = await api.post(base, entity('Doomed Ltd'));
    expect((await api.delete(`${base}/${created.body.id}`)).status).toBe(204);
    expect((await api.get(`${base}/${created.body.id}`)).status).toBe(404);
    const list = await api.get(`${base}?q=doomed`);
    expect(list.body.data).toEqual([]);
    expect((await api.delete(`${base}/${created.body.id}`)).status).toBe(404);
  });
});

describe('GET /accounts/<account_id>/contacts', () => {
  it('orders by id descending and returns the list envelope', async () => {
    const res = await api.get(base);
    expect(res.status).toBe(200);
    expect(res.body).toHaveProperty('has_more');
    expect(res.body).toHaveProperty('next_cursor');
    const ids = res.body.data.map((c: { id: number }) => c.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
  });

  it('q is a case-insensitive substring of the label or the legal entity name, with every character literal', async () => {
    const names = ['100% Pure s.r.o.', 'Under_score Ltd', 'Dot.Com Inc', 'Star*Trek', 'Back\\slash', 'Paren(thesis)', 'Žluťoučký kůň'];
    const ids: Record<string, number> = {};
    for (const name of names) ids[name] = (await api.post(base, entity(name))).body.id;
    const search = async (q: string) =>
      (await api.get(`${base}?limit=100&q=${encodeURIComponent(q)}`)).body.data.map((c: { invoice_account: { name: string } }) => c.invoice_account.name);
    expect(await search('0% p')).toEqual(['100% Pure s.r.o.']);
    expect(await search('%')).toEqual(['100% Pure s.r.o.']);
    expect(await search('_')).toEqual(['Under_score Ltd']);
    expect(await search('t.c')).toEqual(['Dot.Com Inc']);
    expect(await search('r*t')).toEqual(['Star*Trek']);
    expect(await search('k\\s')).toEqual(['Back\\slash']);
    expect(await search('n(t')).toEqual(['Paren(thesis)']);
    expect(await search('ŽLUŤ')).toEqual(['Žluťoučký kůň']);
    expect(await search('.*')).toEqual([]);
    const byLabel = await api.post(base, { name: 'Label Only Match', invoice_account: { name: 'Zeta Holdings' } });
    expect((await api.get(`${base}?q=label%20only`)).body.data.map((c: { id: number }) => c.id)).toEqual([byLabel.body.id]);
  });
});

describe('pagination', () => {
  let pag: Api;
  let pagBase: string;
  beforeAll(async () => {
    const own = await createWorkspace(system, 'Pages Ltd');
    pag = new Api(system.baseUrl, own.pat);
    pagBase = `/api/v1/accounts/${own.id}/contacts`;
    for (let i = 0; i < 7; i++) await pag.post(pagBase, entity(`Paged ${i}`));
  });

  it('limit defaults to 25, pages with next_cursor until has_more is false', async () => {
    const all = await pag.get(pagBase);
    expect(all.body.data).toHaveLength(7);
    expect(all.body).toMatchObject({ has_more: false, next_cursor: null });
    const first = await pag.get(`${pagBase}?limit=3`);
    expect(first.body.data).toHaveLength(3);
    expect(first.body.has_more).toBe(true);
    expect(typeof first.body.next_cursor).toBe('string');
  });

  it('neither skips nor duplicates rows while records are inserted between pages', async () => {
    const seen: number[] = [];
    let cursor: string | null = null;
    let inserted = 0;
    do {
      const page: { body: { data: Array<{ id: number }>; next_cursor: string | null } } = await pag.get(
        `${pagBase}?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      seen.push(...page.body.data.map((c) => c.id));
      cursor = page.body.next_cursor;
      if (inserted++ < 2) await pag.post(pagBase, entity(`Inserted ${inserted}`));
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...seen].sort((a, b) => b - a));
    // New rows get higher ids and land above the cursor: every original row is seen exactly once.
    expect(seen).toHaveLength(7);
  });

  it('filters combine with pagination', async () => {
    const first = await pag.get(`${pagBase}?limit=2&q=paged`);
    const second = await pag.get(`${pagBase}?limit=2&q=paged&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    const names = [...first.body.data, ...second.body.data].map((c: { name: string }) => c.name);
    expect(names.every((n) => n.startsWith('Paged'))).toBe(true);
    expect(new Set(names).size).toBe(4);
  });

  it('422 for limits out of range or not integers', async () => {
    for (const limit of ['0', '101', '-1', 'abc', '2.5']) {
      const res = await pag.get(`${pagBase}?limit=${limit}`);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('invalid_limit');
    }
    expect((await pag.get(`${pagBase}?limit=100`)).status).toBe(200);
  });

  it('422 for a tampered cursor or one reused with other filters', async () => {
    const first = await pag.get(`${pagBase}?limit=2`);
    const cursor: string = first.body.next_cursor;
    const tampered = cursor.slice(0, 5) + (cursor[5] === 'A' ? 'B' : 'A') + cursor.slice(6);
    const bad = await pag.get(`${pagBase}?cursor=${encodeURIComponent(tampered)}`);
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe('invalid_cursor');
    const reused = await pag.get(`${pagBase}?q=paged&cursor=${encodeURIComponent(cursor)}`);
    expect(reused.status).toBe(422);
    expect((await pag.get(`${pagBase}?cursor=garbage`)).status).toBe(422);
  });
});
