// The request chain through the rehearsed images: the admin CLI of the image (as `docker compose exec
// identity invoicing …` runs it) creates a user, a workspace and a token; the gateway then creates a contact,
// an invoice, issues it, answers its PDF (rendering image, Chromium), takes an expense upload whose OCR runs
// in the expenses image, serves the OpenAPI document, the /docs page assets and every process's /metrics.
'use strict';

const fs = require('node:fs');

/** A small PNG of a receipt's text, made on the host (sharp, SVG text): the upload the OCR reads. */
async function receiptPng() {
  const sharp = require('sharp');
  const lines = ['RECEIPT 2026-0042', 'Papiernictvo Nova s.r.o.', 'Total 120.00 EUR'];
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="640" height="200"><rect width="100%" height="100%" fill="white"/>${lines
    .map((l, i) => `<text x="20" y="${50 + i * 50}" font-family="DejaVu Sans, sans-serif" font-size="32" fill="black">${l}</text>`)
    .join('')}</svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** A one-page PDF with a text layer (pdf-lib, on the host): the upload unpdf reads without OCR. */
async function invoicePdf() {
  const { PDFDocument, StandardFonts } = require('pdf-lib');
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  ['INVOICE 2026-0043', 'Supplier: Papiernictvo Nova s.r.o.', 'Total 240.00 EUR'].forEach((line, i) => page.drawText(line, { x: 50, y: 780 - i * 18, size: 11, font }));
  return Buffer.from(await doc.save());
}

async function smoke({ services, stages, ports, localise, launch, exited, result, log }) {
  const step = async (name, fn) => {
    const started = Date.now();
    const detail = await fn();
    result.smoke.push({ step: name, ms: Date.now() - started, ...(detail ?? {}) });
    log(`smoke: ${name}${detail ? ` ${JSON.stringify(detail)}` : ''}`);
  };
  const identity = services.find((s) => s.name === 'identity');
  let cliRuns = 0;
  const cli = async (...args) => {
    const stage = stages[identity.target];
    const p = launch(`cli-${++cliRuns}`, stage, ['node', 'deploy/bin/invoicing.js', ...args], localise('identity', identity.env));
    const code = await exited(p);
    if (code !== 0) throw new Error(`invoicing ${args.join(' ')} ended with ${code}:\n${p.tail()}`);
    return JSON.parse(p.output());
  };
  const base = `http://127.0.0.1:${ports['gateway.http']}`;
  const call = async (method, url, { token, json, form, expect } = {}) => {
    const headers = token ? { authorization: `Bearer ${token}` } : {};
    if (json) headers['content-type'] = 'application/json';
    const res = await fetch(base + url, { method, headers, body: json ? JSON.stringify(json) : form });
    const bytes = Buffer.from(await res.arrayBuffer());
    if (expect && res.status !== expect) throw new Error(`${method} ${url}: ${res.status} (expected ${expect}) ${bytes.toString('utf8').slice(0, 400)}`);
    const type = res.headers.get('content-type') ?? '';
    return { status: res.status, type, bytes, body: type.includes('json') ? JSON.parse(bytes.toString('utf8')) : undefined };
  };

  // Code of the image must not be writable by the process running it.
  await step('the image USER cannot write to /app', async () => {
    const stage = stages[identity.target];
    const p = launch('write-probe', stage, ['node', '-e', "try{require('fs').writeFileSync('dist/rehearsal-probe','x');process.exit(3)}catch(e){process.stdout.write(e.code)}"], {});
    const code = await exited(p);
    if (code !== 0 || p.output() !== 'EACCES') throw new Error(`writing into /app as ${stage.user}: exit ${code} ${p.output()}`);
    return { code: p.output() };
  });

  let token;
  let account;
  await step('admin CLI: user, workspace, legal identity, token', async () => {
    const email = `rehearsal-${Date.now()}@example.com`;
    await cli('user', 'create', '--email', email, '--password', 'correct-horse', '--name', 'Rehearsal');
    account = (await cli('workspace', 'create', '--owner', email, '--name', 'ACME s.r.o.')).id;
    const identityData = { name: 'ACME s.r.o.', registration_id: '27074358', vat_id: 'CZ27074358', email: 'billing@acme.example', address: { name: 'ACME s.r.o.', street: 'Václavské náměstí 1', municipality: 'Praha', postal_code: '11000', country_alpha2: 'cz', contact: '' } };
    await cli('workspace', 'set-legal-identity', '--workspace', String(account), '--data', JSON.stringify(identityData));
    token = (await cli('token', 'create', '--kind', 'pat', '--user', email, '--scopes', 'all')).token;
    return { account };
  });
  const acct = `/api/v1/accounts/${account}`;

  let invoice;
  await step('contact, invoice, issue (gateway → contacts, documents)', async () => {
    const contact = await call('POST', `${acct}/contacts`, { token, json: { name: 'Customer a.s.', invoice_account: { name: 'Customer a.s.', email: 'ap@customer.example' } }, expect: 201 });
    const created = await call('POST', `${acct}/invoices`, {
      token,
      json: { purchaser_id: contact.body.invoice_account_id, issue_date: '2026-03-05', due_date: '2026-03-19', line_items: [{ name: 'Vývoj software', quantity: '10', unit: 'h', unit_price: '1250.50', vat_rate: '21' }] },
      expect: 201,
    });
    invoice = (await call('POST', `${acct}/invoices/${created.body.id}/issue`, { token, expect: 200 })).body;
    return { invoice: invoice.id, number: invoice.number ?? invoice.document_number };
  });

  const rendering = stages[services.find((s) => s.name === 'rendering')?.target];
  const chromium = rendering?.env.CHROMIUM_PATH;
  if (chromium && fs.existsSync(chromium)) {
    await step(`PDF through the rendering image (Chromium: this machine's ${chromium})`, async () => {
      const pdf = await call('GET', `${acct}/invoices/${invoice.id}/pdf`, { token, expect: 200 });
      if (!pdf.type.startsWith('application/pdf') || pdf.bytes.subarray(0, 5).toString() !== '%PDF-') throw new Error(`not a PDF: ${pdf.type}`);
      return { bytes: pdf.bytes.length };
    });
  } else result.notRehearsed.push(`PDF rendering: ${chromium ?? 'CHROMIUM_PATH'} is not on this machine (the image installs Chromium with apt)`);

  const extracted = async (file, type, name) => {
    const form = new FormData();
    form.append('file', new Blob([file], { type }), name);
    const created = await call('POST', `${acct}/expenses/upload`, { token, form, expect: 201 });
    const deadline = Date.now() + 90_000;
    for (;;) {
      const expense = (await call('GET', `${acct}/expenses/${created.body.id}`, { token, expect: 200 })).body;
      if (expense.extraction_status === 'completed') return { expense: expense.id, document_number: expense.document_number, total: expense.total };
      if (expense.extraction_status === 'failed') throw new Error(`extraction failed: ${JSON.stringify(expense.extraction_failure)}`);
      if (Date.now() > deadline) throw new Error(`extraction still ${expense.extraction_status} after 90 s`);
      await new Promise((r) => setTimeout(r, 500));
    }
  };
  await step('expense upload, OCR in the expenses image', async () => extracted(await receiptPng(), 'image/png', 'receipt.png'));
  await step('expense upload, PDF text layer in the expenses image', async () => extracted(await invoicePdf(), 'application/pdf', 'invoice.pdf'));

  await step('OpenAPI document and /docs assets (files the image copies)', async () => {
    const doc = await call('GET', '/api/v1/openapi.json', { expect: 200 });
    for (const asset of ['/docs', '/docs/assets/scalar.js', '/docs/assets/docs.js']) await call('GET', asset, { expect: 200 });
    return { paths: Object.keys(doc.body.paths ?? {}).length };
  });

  await step('/metrics of every process', async () => {
    const served = [];
    for (const s of services.filter((x) => !x.job)) {
      const res = await fetch(`http://127.0.0.1:${ports[`${s.name}.metrics`]}/metrics`);
      const text = await res.text();
      if (res.status !== 200 || !text.includes('# TYPE')) throw new Error(`${s.name} /metrics: ${res.status}`);
      served.push(s.name);
    }
    return { served };
  });
}

module.exports = { smoke, receiptPng, invoicePdf };
