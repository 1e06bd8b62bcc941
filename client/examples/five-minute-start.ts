import { writeFile } from 'node:fs/promises';
import { createInvoicingClient } from '..';

export async function fiveMinuteStart(baseUrl: string, token: string, account_id: number) {
  const api = createInvoicingClient({ baseUrl, token });

  const { data: contact } = await api.POST('/accounts/{account_id}/contacts', {
    params: { path: { account_id } },
    body: { invoice_account: { name: 'Globex s.r.o.', email: 'accounts@globex.example' } },
  });
  const { data: draft } = await api.POST('/accounts/{account_id}/invoices', {
    params: { path: { account_id } },
    body: {
      purchaser_id: contact!.invoice_account_id,
      currency: 'EUR',
      line_items: [{ name: 'Consulting', quantity: '10', unit: 'h', unit_price: '150.00', vat_rate: '21' }],
    },
  });
  const path = { account_id, id: draft!.id };
  const { data: issued } = await api.POST('/accounts/{account_id}/invoices/{id}/issue', { params: { path } });
  const { data: pdf } = await api.GET('/accounts/{account_id}/invoices/{id}/pdf', { params: { path }, parseAs: 'arrayBuffer' });
  await writeFile(`invoice-${issued!.number}.pdf`, Buffer.from(pdf!));
  const { data: sent } = await api.POST('/accounts/{account_id}/invoices/{id}/send', {
    params: { path },
    body: { to: 'accounts@globex.example' },
  });
  return sent!; // status "exposed", email_status "queued"; errors throw InvoicingApiError
}
