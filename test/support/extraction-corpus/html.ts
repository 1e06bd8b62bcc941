// The corpus documents as HTML, in the layouts and conventions of each language: number and date
// formats, labels, where the supplier sits. Rendered by Chromium (render.ts).
import Decimal from 'decimal.js';
import { families } from './families';
import { CorpusDocument, Lang, Rand, rng, Wording } from './model';

export const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

export function formatMoney(value: string, lang: Lang): string {
  const [int, frac] = new Decimal(value).toFixed(2).split('.');
  const group = lang === 'en' ? ',' : lang === 'de' ? '.' : '\u00a0';
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, group);
  return `${grouped}${lang === 'en' ? '.' : ','}${frac}`;
}

const MONTHS_EN = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

export function formatDate(iso: string, lang: Lang, variant: number): string {
  const [y, m, d] = iso.split('-').map(Number);
  if (lang === 'en') return [`${d} ${MONTHS_EN[m - 1]} ${y}`, `${MONTHS_EN[m - 1]} ${d}, ${y}`, iso][variant % 3];
  if (lang === 'de') return `${String(d).padStart(2, '0')}.${String(m).padStart(2, '0')}.${y}`;
  return variant % 2 === 0 ? `${d}. ${m}. ${y}` : `${String(d).padStart(2, '0')}.${String(m).padStart(2, '0')}.${y}`;
}

const T = {
  sk: { title: 'FAKTÚRA', number: 'Faktúra č.', supplier: 'Dodávateľ', customer: 'Odberateľ', issue: 'Dátum vystavenia', due: 'Dátum splatnosti', taxPoint: 'Dátum dodania', reg: 'IČO', tax: 'DIČ', vat: 'IČ DPH', vs: 'Variabilný symbol', bank: 'Bankové spojenie', desc: 'Popis', qty: 'Množstvo', unit: 'Jedn. cena', rate: 'DPH %', amount: 'Spolu', recap: 'Rekapitulácia DPH', recapRate: 'Sadzba', recapBase: 'Základ', recapVat: 'DPH', subtotal: 'Spolu bez DPH', vatTotal: 'DPH celkom', total: 'Celkom k úhrade', receipt: 'Pokladničný doklad', receiptNo: 'Doklad č.', date: 'Dátum', country: 'Slovenská republika', thanks: 'Ďakujeme za nákup' },
  cs: { title: 'FAKTURA – DAŇOVÝ DOKLAD', number: 'Faktura č.', supplier: 'Dodavatel', customer: 'Odběratel', issue: 'Datum vystavení', due: 'Datum splatnosti', taxPoint: 'DUZP', reg: 'IČO', tax: 'DIČ', vat: 'DIČ', vs: 'Variabilní symbol', bank: 'Bankovní spojení', desc: 'Popis', qty: 'Množství', unit: 'Cena za MJ', rate: 'DPH %', amount: 'Celkem', recap: 'Rekapitulace DPH', recapRate: 'Sazba', recapBase: 'Základ', recapVat: 'DPH', subtotal: 'Celkem bez DPH', vatTotal: 'DPH celkem', total: 'Celkem k úhradě', receipt: 'Účtenka', receiptNo: 'Účtenka č.', date: 'Datum', country: 'Česká republika', thanks: 'Děkujeme za nákup' },
  de: { title: 'RECHNUNG', number: 'Rechnungsnummer', supplier: 'Lieferant', customer: 'Rechnungsempfänger', issue: 'Rechnungsdatum', due: 'Fällig am', taxPoint: 'Leistungsdatum', reg: 'Handelsregister', tax: 'Steuernummer', vat: 'USt-IdNr.', vs: '', bank: 'Bankverbindung', desc: 'Bezeichnung', qty: 'Menge', unit: 'Einzelpreis', rate: 'MwSt.', amount: 'Gesamt', recap: 'Steuersatz', recapRate: 'Satz', recapBase: 'Netto', recapVat: 'MwSt.', subtotal: 'Nettobetrag', vatTotal: 'MwSt. gesamt', total: 'Gesamtbetrag', receipt: 'Kassenbon', receiptNo: 'Bon-Nr.', date: 'Datum', country: 'Deutschland', thanks: 'Vielen Dank für Ihren Einkauf' },
  en: { title: 'INVOICE', number: 'Invoice No.', supplier: 'Supplier', customer: 'Bill to', issue: 'Invoice date', due: 'Due date', taxPoint: 'Tax point', reg: 'Company No.', tax: 'Tax ID', vat: 'VAT No.', vs: '', bank: 'Bank details', desc: 'Description', qty: 'Qty', unit: 'Unit price', rate: 'VAT', amount: 'Amount', recap: 'VAT summary', recapRate: 'Rate', recapBase: 'Net', recapVat: 'VAT', subtotal: 'Subtotal', vatTotal: 'VAT total', total: 'Total due', receipt: 'RECEIPT', receiptNo: 'Receipt No.', date: 'Date', country: 'United Kingdom', thanks: 'Thank you for shopping with us' },
};

export type Labels = (typeof T)['sk'];

/** Label wordings per language beyond the canonical one (split.ts says which are held out). */
const WORDINGS: Record<Exclude<Wording, 'canonical' | 'bare'>, Record<Lang, Partial<Labels>>> = {
  abbreviated: {
    sk: { number: 'Č. fa', supplier: 'Dodáv.', customer: 'Odber.', issue: 'Dát. vyst.', due: 'Splatnosť', taxPoint: 'DUZP', vs: 'VS', bank: 'Banka', desc: 'Položka', qty: 'Mn.', unit: 'J. cena', subtotal: 'Základ', vatTotal: 'DPH', total: 'K úhrade', receiptNo: 'Č. dokl.' },
    cs: { number: 'Č. fa', supplier: 'Dod.', customer: 'Odb.', issue: 'Vyst.', due: 'Splat.', vs: 'VS', bank: 'Banka', qty: 'Mn.', unit: 'Cena/MJ', subtotal: 'Zákl.', vatTotal: 'DPH', total: 'K úhr.', receiptNo: 'Č. úč.' },
    en: { number: 'Inv. #', supplier: 'From', customer: 'To', issue: 'Date', due: 'Due', reg: 'Co. No.', vat: 'VAT Reg.', bank: 'Bank', qty: 'Qty', unit: 'Price', subtotal: 'Net', vatTotal: 'VAT', total: 'Total', receiptNo: 'Rcpt #' },
    de: { number: 'Re.-Nr.', supplier: 'Von', customer: 'An', issue: 'Datum', due: 'Fällig', tax: 'St.-Nr.', vat: 'USt-ID', bank: 'Bank', qty: 'Mg.', unit: 'EP', amount: 'GP', subtotal: 'Netto', vatTotal: 'USt.', total: 'Brutto', receiptNo: 'Bon' },
  },
  synonyms: {
    sk: { title: 'FAKTÚRA – DAŇOVÝ DOKLAD', number: 'Číslo faktúry', supplier: 'Predávajúci', customer: 'Kupujúci', issue: 'Dátum vyhotovenia', due: 'Splatná dňa', taxPoint: 'Dátum zdaniteľného plnenia', reg: 'IČ', bank: 'Platobné údaje', vs: 'Var. symbol', desc: 'Názov', qty: 'Počet', unit: 'Cena/ks', amount: 'Suma', recap: 'Rozpis DPH', subtotal: 'Základ dane', vatTotal: 'Výška DPH', total: 'Suma na úhradu', receiptNo: 'Číslo dokladu' },
    cs: { number: 'Číslo dokladu', supplier: 'Prodávající', customer: 'Kupující', issue: 'Vystaveno', due: 'Splatno', taxPoint: 'Datum uskut. zdan. plnění', reg: 'IČ', bank: 'Platební údaje', desc: 'Označení dodávky', qty: 'Počet', amount: 'Cena celkem', subtotal: 'Základ daně', vatTotal: 'Výše DPH', total: 'K úhradě', receiptNo: 'Doklad č.' },
    en: { title: 'TAX INVOICE', number: 'Invoice number', supplier: 'Seller', customer: 'Buyer', issue: 'Date of issue', due: 'Payment due', taxPoint: 'Date of supply', reg: 'Registration No.', vat: 'VAT Reg. No.', bank: 'Payment details', desc: 'Item', qty: 'Quantity', unit: 'Price', amount: 'Line total', subtotal: 'Net amount', vatTotal: 'Total VAT', total: 'Amount due', receiptNo: 'Transaction' },
    de: { number: 'Rechnung Nr.', supplier: 'Verkäufer', customer: 'Käufer', issue: 'Datum', due: 'Zahlbar bis', taxPoint: 'Lieferdatum', tax: 'St.-Nr.', vat: 'UID-Nr.', bank: 'Zahlungsinformationen', desc: 'Artikel', qty: 'Anz.', unit: 'Preis', amount: 'Summe', subtotal: 'Zwischensumme', vatTotal: 'Umsatzsteuer', total: 'Zu zahlen', receiptNo: 'Beleg-Nr.' },
  },
};

const PAID_BY_CARD: Record<Lang, string> = { sk: 'Uhradené platobnou kartou', cs: 'Uhrazeno platební kartou', en: 'Paid by card – thank you', de: 'Bezahlt mit Karte' };

/** The labels of a document: its language's, in its wording ('bare': no supplier label, the VAT id printed without one). */
export function labelsOf(doc: CorpusDocument): Labels {
  const t = T[doc.lang];
  if (doc.wording === 'canonical') return t;
  if (doc.wording === 'bare') return { ...t, supplier: '', vat: '' };
  return { ...t, ...WORDINGS[doc.wording][doc.lang] };
}

/** A block's heading ("Dodávateľ:"), or nothing when the wording prints none. */
export const heading = (label: string) => (label ? `<b>${label}:</b><br>` : '');
const labelled = (label: string, value: string) => (label ? `${label}: ${value}` : value);

const STYLE = `body{font-family:'DejaVu Sans',sans-serif;color:#111;margin:0}table{border-collapse:collapse}td,th{padding:3px 6px;vertical-align:top;text-align:left}.r{text-align:right}`;

export function ids(doc: CorpusDocument, t: Labels, sep = '<br>'): string {
  const s = doc.fields.supplier;
  const parts: string[] = [];
  if (s.registration_id) parts.push(doc.lang === 'de' ? `${t.reg}: ${s.registration_id.startsWith('HRB') ? `Amtsgericht ${s.address.municipality}, ${s.registration_id}` : s.registration_id}` : `${t.reg}: ${s.registration_id}`);
  if (s.tax_id) parts.push(`${t.tax}: ${s.tax_id}`);
  if (s.vat_id) parts.push(labelled(t.vat, s.vat_id));
  return parts.map(esc).join(sep);
}

export function itemsTable(doc: CorpusDocument, t: Labels): string {
  const f = doc.fields;
  const rows = f.line_items
    .map((it, i) => `<tr><td>${esc(it.name)}</td><td class="r">${it.quantity}</td><td class="r">${formatMoney(it.unit_price!, doc.lang)}</td><td class="r">${doc.itemRates[i]} %</td><td class="r">${formatMoney(it.total!, doc.lang)}</td></tr>`)
    .join('');
  return `<table style="width:100%;margin-top:18px"><tr style="border-bottom:1px solid #444"><th>${t.desc}</th><th class="r">${t.qty}</th><th class="r">${t.unit}</th><th class="r">${t.rate}</th><th class="r">${t.amount}</th></tr>${rows}</table>`;
}

export function recap(doc: CorpusDocument, t: Labels): string {
  const rows = doc.fields.vat_breakdown.map((v) => `<tr><td>${v.rate} %</td><td class="r">${formatMoney(v.base, doc.lang)}</td><td class="r">${formatMoney(v.vat, doc.lang)}</td></tr>`).join('');
  return `<table style="margin-top:14px"><tr><th>${t.recapRate}</th><th class="r">${t.recapBase}</th><th class="r">${t.recapVat}</th></tr>${rows}</table>`;
}

export function totals(doc: CorpusDocument, t: Labels): string {
  const f = doc.fields;
  const c = f.currency!;
  return `<table style="margin:14px 0 0 auto"><tr><td>${t.subtotal}</td><td class="r">${formatMoney(f.subtotal!, doc.lang)} ${c}</td></tr><tr><td>${t.vatTotal}</td><td class="r">${formatMoney(f.vat_total!, doc.lang)} ${c}</td></tr><tr><td><b>${t.total}</b></td><td class="r"><b>${formatMoney(f.total!, doc.lang)} ${c}</b></td></tr></table>`;
}

export function payment(doc: CorpusDocument, t: Labels): string {
  const f = doc.fields;
  if (!f.iban) return `<p style="margin-top:14px">${PAID_BY_CARD[doc.lang]}</p>`;
  const spaced = f.iban.replace(/(.{4})/g, '$1 ').trim();
  return `<p style="margin-top:14px">${t.bank}: IBAN: ${spaced}<br>BIC/SWIFT: ${f.bic}${f.variable_symbol ? `<br>${t.vs}: ${f.variable_symbol}` : ''}</p>`;
}

export function supplierLines(doc: CorpusDocument, t: Labels): string {
  const s = doc.fields.supplier;
  const a = s.address;
  const city = doc.lang === 'en' ? `${esc(a.municipality!)} ${a.postal_code}` : `${a.postal_code} ${esc(a.municipality!)}`;
  return `${esc(s.name!)}<br>${esc(a.street!)}<br>${city}<br>${t.country}<br>${ids(doc, t)}`;
}

export function customerLines(doc: CorpusDocument): string {
  const c = doc.customer;
  const city = doc.lang === 'en' ? `${esc(c.city)} ${c.postal}` : `${c.postal} ${esc(c.city)}`;
  if (doc.scenario === 'customer_ids') {
    // The purchaser's ids and account printed as fully as the supplier's: the extractor must not take them.
    const t = labelsOf(doc);
    const ids = [c.registration_id && `${t.reg || 'ID'}: ${c.registration_id}`, c.tax_id && `${t.tax || 'Tax'}: ${c.tax_id}`, c.vat_id && labelled(t.vat, c.vat_id), `IBAN: ${c.iban.replace(/(.{4})/g, '$1 ').trim()}`];
    return `${esc(c.name)}<br>${esc(c.street)}<br>${city}<br>${ids.filter(Boolean).map((x) => esc(x as string)).join('<br>')}`;
  }
  return `${esc(c.name)}<br>${esc(c.street)}<br>${city}${c.vat_id ? `<br>VAT: ${c.vat_id}` : ''}`;
}

function classic(doc: CorpusDocument, variant: number): string {
  const t = labelsOf(doc);
  const f = doc.fields;
  return `<div style="padding:40px 48px;font-size:13px">
  <table style="width:100%"><tr><td><h1 style="margin:0;font-size:24px">${t.title}</h1></td><td class="r">${t.number} ${esc(f.document_number!)}</td></tr></table>
  <table style="width:100%;margin-top:24px"><tr><td style="width:50%">${heading(t.supplier)}${supplierLines(doc, t)}</td><td>${heading(t.customer)}${customerLines(doc)}</td></tr></table>
  <p style="margin-top:20px">${t.issue}: ${formatDate(f.issue_date!, doc.lang, variant)}<br>${t.taxPoint}: ${formatDate(doc.taxPointDate, doc.lang, variant)}<br>${t.due}: ${formatDate(f.due_date!, doc.lang, variant)}</p>
  ${payment(doc, t)}${itemsTable(doc, t)}${recap(doc, t)}${totals(doc, t)}</div>`;
}

function letterhead(doc: CorpusDocument, variant: number): string {
  const t = labelsOf(doc);
  const f = doc.fields;
  const s = f.supplier;
  const a = s.address;
  const city = doc.lang === 'en' ? `${esc(a.municipality!)} ${a.postal_code}` : `${a.postal_code} ${esc(a.municipality!)}`;
  return `<div style="padding:40px 48px;font-size:13px">
  <div style="font-size:22px;font-weight:bold">${esc(s.name!)}</div>
  <div>${esc(a.street!)}, ${city}, ${t.country}</div>
  <div style="margin-bottom:28px">${ids(doc, t, ' · ')}</div>
  <table style="width:100%"><tr><td style="width:55%">${heading(t.customer)}${customerLines(doc)}</td>
  <td><h2 style="margin:0">${t.title}</h2>${t.number}: ${esc(f.document_number!)}<br>${t.issue}: ${formatDate(f.issue_date!, doc.lang, variant + 1)}<br>${t.due}: ${formatDate(f.due_date!, doc.lang, variant + 1)}</td></tr></table>
  ${itemsTable(doc, t)}${totalsWithRates(doc, t)}${payment(doc, t)}</div>`;
}

/** Totals with the VAT rows inline: "zzgl. 19 % MwSt. auf 1.000,00 … 190,00". */
export function totalsWithRates(doc: CorpusDocument, t: Labels): string {
  const f = doc.fields;
  const c = f.currency!;
  const rows = f.vat_breakdown.map((v) => `<tr><td>${t.recapVat} ${v.rate} % (${t.recapBase} ${formatMoney(v.base, doc.lang)})</td><td class="r">${formatMoney(v.vat, doc.lang)} ${c}</td></tr>`).join('');
  return `<table style="margin:14px 0 0 auto"><tr><td>${t.subtotal}</td><td class="r">${formatMoney(f.subtotal!, doc.lang)} ${c}</td></tr>${rows}<tr><td><b>${t.total}</b></td><td class="r"><b>${formatMoney(f.total!, doc.lang)} ${c}</b></td></tr></table>`;
}

function receipt(doc: CorpusDocument, variant: number, width = 280, fontSize = 12): string {
  const t = labelsOf(doc);
  const f = doc.fields;
  const s = f.supplier;
  const a = s.address;
  const letters = 'ABCD';
  const rateLetter = (rate: string) => letters[f.vat_breakdown.findIndex((v) => v.rate === rate)];
  const items = f.line_items
    .map((it, i) =>
      it.quantity === '1'
        ? `<tr><td>${esc(it.name)}</td><td class="r">${formatMoney(it.total!, doc.lang)} ${rateLetter(doc.itemRates[i])}</td></tr>`
        : `<tr><td colspan="2">${esc(it.name)}</td></tr><tr><td>&nbsp;&nbsp;${it.quantity} x ${formatMoney(it.unit_price!, doc.lang)}</td><td class="r">${formatMoney(it.total!, doc.lang)} ${rateLetter(doc.itemRates[i])}</td></tr>`,
    )
    .join('');
  const vatRows = f.vat_breakdown.map((v) => `<tr><td>${rateLetter(v.rate)} ${v.rate}%</td><td class="r">${formatMoney(v.base, doc.lang)}</td><td class="r">${formatMoney(v.vat, doc.lang)}</td></tr>`).join('');
  const city = doc.lang === 'en' ? `${esc(a.municipality!)} ${a.postal_code}` : `${a.postal_code} ${esc(a.municipality!)}`;
  return `<div style="width:${width}px;padding:12px 11px;font-family:'DejaVu Sans Mono',monospace;font-size:${fontSize}px">
  <div style="text-align:center"><b>${esc(s.name!)}</b><br>${esc(a.street!)}<br>${city}<br>${ids(doc, t)}</div>
  <div style="text-align:center;margin:8px 0">${t.receipt}</div>
  <table style="width:100%">${items}</table><hr>
  <table style="width:100%;font-size:14px"><tr><td><b>${t.total}</b></td><td class="r"><b>${formatMoney(f.total!, doc.lang)} ${f.currency}</b></td></tr></table>
  <table style="width:100%;margin-top:6px"><tr><td>${t.recapRate}</td><td class="r">${t.recapBase}</td><td class="r">${t.recapVat}</td></tr>${vatRows}</table>
  <div style="margin-top:8px">${t.receiptNo} ${f.document_number}<br>${t.date}: ${formatDate(f.issue_date!, doc.lang, variant)} ${doc.receiptTime}</div>
  <div style="text-align:center;margin-top:8px">${t.thanks}</div></div>`;
}

export function receiptHtml(doc: CorpusDocument, variant: number, width: number, fontSize: number): string {
  return receipt(doc, variant, width, fontSize);
}

export function documentHtml(doc: CorpusDocument, seed: number): string {
  const variant = new Rand(rng(seed + doc.id.length * 31 + Number(doc.id.slice(0, 3)))).int(0, 5);
  const body = doc.layout === 'classic' ? classic(doc, variant) : doc.layout === 'letterhead' ? letterhead(doc, variant) : doc.layout === 'receipt' ? receipt(doc, variant) : families[doc.layout](doc, variant);
  return `<!doctype html><html><head><meta charset="utf-8"><style>${STYLE}</style></head><body>${body}</body></html>`;
}
