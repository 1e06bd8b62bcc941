// Everything a PDF prints, localised per pdf_language with the locale's number, currency and date
// formats (Intl, fed decimal strings so amounts are formatted exactly, never through a float).
import Decimal from 'decimal.js';
import { PrintableDocument, PrintedParty } from '../ports/document-source';
import { LabelledValue, PartyView, PdfView } from '../ports/document-template';
import { INTL_LOCALE, Labels, LABELS, Language } from './labels';

export interface Formats {
  money(amount: string): string;
  number(value: string): string;
  percent(value: string): string;
  date(iso: string): string;
}

/** Intl formats a decimal string exactly (ES2023 Intl.NumberFormat v3); the typings only know numbers. */
const exact = (value: string) => value as unknown as number;

export function formats(language: Language, currency: string): Formats {
  const locale = INTL_LOCALE[language];
  const money = new Intl.NumberFormat(locale, { style: 'currency', currency, currencyDisplay: 'code' });
  const number = new Intl.NumberFormat(locale, { maximumFractionDigits: 6 });
  const date = new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'numeric', year: 'numeric', timeZone: 'UTC' });
  return {
    money: (amount) => money.format(exact(amount || '0')),
    number: (value) => number.format(exact(value || '0')),
    percent: (value) => `${number.format(exact(value || '0'))} %`,
    date: (iso) => date.format(new Date(`${iso.slice(0, 10)}T00:00:00Z`)),
  };
}

const countryName = (alpha2: string, language: Language): string => {
  if (!alpha2) return '';
  try {
    return new Intl.DisplayNames([INTL_LOCALE[language]], { type: 'region' }).of(alpha2.toUpperCase()) ?? alpha2.toUpperCase();
  } catch {
    return alpha2.toUpperCase();
  }
};

function party(heading: string, p: PrintedParty, labels: Labels, language: Language): PartyView {
  const a = p.address;
  const ids: LabelledValue[] = [
    { label: labels.registration_id, value: p.registration_id },
    { label: labels.tax_id, value: p.tax_id },
    { label: labels.vat_id, value: p.vat_id },
  ].filter((row) => row.value);
  return {
    heading,
    name: p.name,
    address_lines: a ? [a.street, [a.postal_code, a.municipality].filter(Boolean).join(' '), countryName(a.country_alpha2, language)].filter(Boolean) : [],
    ids,
    contact: [p.email, p.phone].filter(Boolean),
  };
}

export interface ViewInputs {
  doc: PrintableDocument;
  /** The supplier as printed (see printedSupplier). */
  supplier: PrintedParty;
  language: Language;
  qr: { caption?: string; image_data_uri: string } | null;
  logo_data_uri: string | null;
}

export function pdfView({ doc, supplier, language, qr, logo_data_uri }: ViewInputs): PdfView {
  const labels = LABELS[language];
  const f = formats(language, doc.currency);
  const stamp = doc.status === 'draft' ? labels.draft : doc.status === 'paid' ? labels.paid : null;
  const dates: LabelledValue[] = [{ label: labels.issue_date, value: f.date(doc.issue_date) }];
  if (doc.delivery_date) dates.push({ label: labels.delivery_date, value: f.date(doc.delivery_date) });
  if (doc.due_date) dates.push({ label: labels.due_date, value: f.date(doc.due_date) });
  if (doc.paid_on) dates.push({ label: labels.paid_on, value: f.date(doc.paid_on) });
  if (doc.invoice_number) dates.push({ label: labels.corrects_invoice, value: doc.invoice_number });
  const credited = new Decimal(doc.credited_amount || '0');
  const totals = [
    { label: labels.subtotal, value: f.money(doc.subtotal), emphasis: false },
    { label: labels.vat_total, value: f.money(doc.vat_total), emphasis: false },
    { label: labels.total, value: f.money(doc.total), emphasis: !credited.gt(0) && doc.type !== 'invoice' },
  ];
  if (credited.gt(0)) totals.push({ label: labels.credits_applied, value: f.money(credited.negated().toFixed()), emphasis: false });
  if (doc.type === 'invoice' || doc.type === 'proforma') totals.push({ label: labels.amount_due, value: f.money(doc.amount_due), emphasis: true });
  const bank = doc.bank_account;
  const paymentRows: LabelledValue[] = bank
    ? [
        { label: labels.bank, value: bank.name },
        { label: labels.account_number, value: bank.account_number ? `${bank.account_number}${bank.bank_code ? `/${bank.bank_code}` : ''}` : '' },
        { label: labels.iban, value: bank.iban },
        { label: labels.swift, value: bank.swift },
      ].filter((row) => row.value)
    : [];
  if (doc.variable_symbol) paymentRows.push({ label: labels.variable_symbol, value: doc.variable_symbol });
  return {
    lang: language,
    title: labels.title[doc.type],
    number: doc.number ?? '',
    stamp,
    supplier: party(labels.supplier, supplier, labels, language),
    purchaser: doc.purchaser ? party(labels.purchaser, doc.purchaser, labels, language) : null,
    dates,
    headings: {
      item: labels.item,
      quantity: labels.quantity,
      unit_price: labels.unit_price,
      vat_rate: labels.vat_rate,
      discount: labels.discount,
      net_amount: labels.net_amount,
    },
    lines: doc.line_items.map((l) => ({
      name: l.name,
      description: l.description,
      quantity: f.number(l.quantity),
      unit: l.unit,
      unit_price: f.money(l.unit_price),
      vat_rate: f.percent(l.vat_rate),
      discount: new Decimal(l.discount || '0').isZero() ? '' : f.percent(l.discount),
      net_amount: f.money(l.net_amount),
    })),
    vat_heading: { title: labels.vat_breakdown, rate: labels.vat_rate, base: labels.vat_base, vat: labels.vat },
    vat_breakdown: doc.vat_breakdown.map((r) => ({ rate: f.percent(r.vat_rate), base: f.money(r.base), vat: f.money(r.vat) })),
    totals,
    payment: paymentRows.length ? { heading: labels.payment, rows: paymentRows } : null,
    qr: qr ? { caption: qr.caption ?? labels.pay_by_qr, image_data_uri: qr.image_data_uri } : null,
    logo_data_uri,
    note: doc.note ? { heading: labels.note, text: doc.note } : null,
  };
}
