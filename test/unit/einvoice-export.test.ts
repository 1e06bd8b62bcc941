// The export use case (services/rendering/domain/einvoices.ts) over a fake DocumentSource: the format and
// status refusals, the ETag and the 304 that generates nothing, the file name, and that an issued document
// prints its supplier snapshot, not the workspace's current identity.
import { EInvoices } from '../../services/rendering/domain/einvoices';
import { DocumentSource, PrintableDocument, Workspace } from '../../services/rendering/ports/document-source';
import { CZ_SELLER, printable } from './einvoice.fixtures';

const tenant = { account_id: 1, livemode: true };

function source(doc: PrintableDocument, identity = CZ_SELLER): DocumentSource & { reads: number } {
  const s = {
    reads: 0,
    async document() {
      s.reads++;
      return doc;
    },
    async workspace(): Promise<Workspace> {
      return { identity, logo_key: null };
    },
    async logo() {
      return null;
    },
  };
  return s;
}

describe('EInvoices.export', () => {
  it('writes UBL and CII as application/xml with the localised .xml name', async () => {
    const einvoices = new EInvoices(source(printable()));
    const ubl = await einvoices.export(tenant, 'invoice', 7, 'ubl');
    expect(ubl).toMatchObject({ contentType: 'application/xml', filename: 'Faktura 2026000001.xml', notModified: false });
    expect(ubl.xml!.toString()).toContain('<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"');
    const cii = await einvoices.export(tenant, 'invoice', 7, 'cii');
    expect(cii.xml!.toString()).toContain('<rsm:CrossIndustryInvoice');
    expect(cii.etag).not.toBe(ubl.etag);
  });

  it('answers a matching If-None-Match with 304 and no XML; a paid invoice has another ETag', async () => {
    const einvoices = new EInvoices(source(printable()));
    const { etag } = await einvoices.export(tenant, 'invoice', 7, 'ubl');
    expect(await einvoices.export(tenant, 'invoice', 7, 'ubl', `W/${etag}, "other"`)).toMatchObject({ notModified: true, xml: null, etag });
    const paid = new EInvoices(source(printable({ status: 'paid', paid_on: '2026-03-10' })));
    expect((await paid.export(tenant, 'invoice', 7, 'ubl')).etag).not.toBe(etag);
  });

  it('refuses another format before reading anything, and a draft', async () => {
    const src = source(printable());
    await expect(new EInvoices(src).export(tenant, 'invoice', 7, 'toString')).rejects.toMatchObject({ code: 'unsupported_format', field: 'format' });
    expect(src.reads).toBe(0);
    const draft = new EInvoices(source(printable({ status: 'draft', number: null })));
    await expect(draft.export(tenant, 'invoice', 7, 'ubl')).rejects.toMatchObject({ code: 'document_not_issued' });
  });

  it("prints an issued document's supplier snapshot, not the workspace's identity of today", async () => {
    const renamed = { ...CZ_SELLER, name: 'ACME Renamed s.r.o.' };
    const xml = (await new EInvoices(source(printable(), renamed)).export(tenant, 'invoice', 7, 'ubl')).xml!.toString();
    expect(xml).toContain('<cbc:RegistrationName>ACME s.r.o.</cbc:RegistrationName>');
    expect(xml).not.toContain('Renamed');
  });
});
