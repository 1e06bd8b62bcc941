// Helpers of the documents API suites: a workspace with purchasers, line items, and the documents
// admin RPC (number format, currency, locale) as an operator would use it.
import { Api } from './api';
import { createWorkspace, Workspace } from './fixtures';
import { System } from './system';

export interface DocsWorkspace extends Workspace {
  api: Api;
  /** `/api/v1/accounts/<id>` */
  base: string;
  /** Legal-entity id of a purchaser with an e-mail address. */
  purchaser: number;
  /** Legal-entity id of a purchaser without one. */
  purchaserNoMail: number;
}

export const CZ_SUPPLIER = {
  name: 'ACME s.r.o.',
  registration_id: '27074358',
  vat_id: 'CZ27074358',
  email: 'billing@acme.example',
  address: { name: 'ACME s.r.o.', street: 'Václavské náměstí 1', municipality: 'Praha', postal_code: '11000', country_alpha2: 'cz', contact: '' },
};

export async function createPurchaser(api: Api, base: string, name: string, email?: string): Promise<number> {
  const res = await api.post(`${base}/contacts`, { name, invoice_account: { name, ...(email ? { email } : {}) } });
  if (res.status !== 201) throw new Error(`contact create failed: ${res.status} ${res.text}`);
  return res.body.invoice_account_id as number;
}

/** A workspace whose legal identity is a Czech company (workspace currency CZK, locale cs) unless told otherwise. */
export async function docsWorkspace(system: System, legalIdentity: object | null = CZ_SUPPLIER): Promise<DocsWorkspace> {
  const ws = await createWorkspace(system, 'ACME s.r.o.');
  const api = new Api(system.baseUrl, ws.pat);
  const base = `/api/v1/accounts/${ws.id}`;
  // The legal identity (a CLI process) is set while the purchasers are created: neither reads the other.
  const [purchaser, purchaserNoMail] = await Promise.all([
    createPurchaser(api, base, 'Customer a.s.', 'ap@customer.example').then(async (first) => [first, await createPurchaser(api, base, 'Silent Ltd')]),
    legalIdentity ? system.cli('workspace', 'set-legal-identity', '--workspace', String(ws.id), '--data', JSON.stringify(legalIdentity)) : undefined,
  ]).then(([ids]) => ids);
  return { ...ws, api, base, purchaser, purchaserNoMail };
}

export const line = (unit_price: string | number = '100', vat_rate: string | number = '21', quantity: string | number = '1', name = 'Consulting') => ({
  name,
  unit_price,
  vat_rate,
  quantity,
});

/** Sets a workspace's document settings as an operator does: through the admin CLI. */
export async function setDocumentSettings(system: System, accountId: number, settings: { number_format?: string; currency?: string; locale?: string }) {
  const flags = Object.entries(settings).flatMap(([name, value]) => [`--${name.replace(/_/g, '-')}`, String(value)]);
  return { settings: await system.cli('workspace', 'document-settings', '--workspace', String(accountId), ...flags) };
}
