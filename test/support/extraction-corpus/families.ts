// The layout families beyond the first corpus's three (split.ts says which are tuned and which held out):
// where the supplier sits (right column, footer, sidebar, below the purchaser, top right without a
// label), tables with and without rulings, label above the value, two-page documents, receipts 58 and
// 110 mm wide. Built from the same blocks as html.ts, so a family differs from another by its layout only.
import {
  customerLines, esc, formatDate, formatMoney, heading, ids, itemsTable, labelsOf, Labels, payment, recap, receiptHtml,
  supplierLines, totals, totalsWithRates,
} from './html';
import { CorpusDocument, Layout } from './model';

type Family = (doc: CorpusDocument, variant: number) => string;

/** Height of one A4 page in CSS pixels (96 dpi), a hair under 297 mm so Chromium's PDF keeps one page per page. */
export const PAGE_HEIGHT = 1122;
/** Receipt paper widths in CSS pixels (58, 80, 110 mm less the printer's margins) by family. */
export const RECEIPT_WIDTH: Partial<Record<Layout, number>> = { receipt: 302, receipt_58: 220, receipt_wide: 416 };

function dates(doc: CorpusDocument, t: Labels, variant: number, sep = '<br>'): string {
  const f = doc.fields;
  return [`${t.issue}: ${formatDate(f.issue_date!, doc.lang, variant)}`, `${t.taxPoint}: ${formatDate(doc.taxPointDate, doc.lang, variant)}`, `${t.due}: ${formatDate(f.due_date!, doc.lang, variant)}`].join(sep);
}

function titleLine(doc: CorpusDocument, t: Labels): string {
  return `<table style="width:100%"><tr><td><h1 style="margin:0;font-size:24px">${t.title}</h1></td><td class="r">${t.number} ${esc(doc.fields.document_number!)}</td></tr></table>`;
}

/** Items with every cell ruled. */
function ruledItems(doc: CorpusDocument, t: Labels): string {
  const cell = 'border:1px solid #333;padding:4px 6px';
  const rows = doc.fields.line_items
    .map((it, i) => `<tr><td style="${cell}">${i + 1}</td><td style="${cell}">${esc(it.name)}</td><td style="${cell}" class="r">${it.quantity}</td><td style="${cell}" class="r">${formatMoney(it.unit_price!, doc.lang)}</td><td style="${cell}" class="r">${doc.itemRates[i]} %</td><td style="${cell}" class="r">${formatMoney(it.total!, doc.lang)}</td></tr>`)
    .join('');
  return `<table style="width:100%;margin-top:18px"><tr style="background:#ddd"><th style="${cell}">#</th><th style="${cell}">${t.desc}</th><th style="${cell}" class="r">${t.qty}</th><th style="${cell}" class="r">${t.unit}</th><th style="${cell}" class="r">${t.rate}</th><th style="${cell}" class="r">${t.amount}</th></tr>${rows}</table>`;
}

/** Items without any rule, the quantity before the name ("2 × Toner"), wide gaps as the only columns. */
function plainItems(doc: CorpusDocument, t: Labels): string {
  const rows = doc.fields.line_items
    .map((it, i) => `<tr><td>${esc(it.name)}</td><td class="r">${it.quantity}</td><td class="r">${formatMoney(it.unit_price!, doc.lang)}</td><td class="r">${formatMoney(it.total!, doc.lang)}</td><td class="r">${doc.itemRates[i]} %</td></tr>`)
    .join('');
  return `<table style="width:100%;margin-top:22px"><tr><td><i>${t.desc}</i></td><td class="r"><i>${t.qty}</i></td><td class="r"><i>${t.unit}</i></td><td class="r"><i>${t.amount}</i></td><td class="r"><i>${t.rate}</i></td></tr>${rows}</table>`;
}

/** Labels above their values in one row of boxes: number | issue | due (| tax point). */
function headerGrid(doc: CorpusDocument, t: Labels, variant: number, ruled: boolean): string {
  const f = doc.fields;
  const cell = ruled ? 'border:1px solid #333;padding:4px 8px' : 'padding:2px 18px 2px 0';
  const cols: [string, string][] = [[t.number, esc(f.document_number!)], [t.issue, formatDate(f.issue_date!, doc.lang, variant)], [t.taxPoint, formatDate(doc.taxPointDate, doc.lang, variant)], [t.due, formatDate(f.due_date!, doc.lang, variant)]];
  return `<table style="margin-top:18px"><tr>${cols.map(([l]) => `<td style="${cell};font-size:11px;color:#444">${l}</td>`).join('')}</tr><tr>${cols.map(([, v]) => `<td style="${cell}"><b>${v}</b></td>`).join('')}</tr></table>`;
}

const page = (content: string, extra = '') => `<div style="position:relative;width:794px;height:${PAGE_HEIGHT}px;overflow:hidden;break-after:page;font-size:13px${extra}">${content}</div>`;

const purchaser_first: Family = (doc, variant) => {
  const t = labelsOf(doc);
  return `<div style="padding:40px 48px;font-size:13px">${titleLine(doc, t)}
  <div style="margin-top:22px">${heading(t.customer)}${customerLines(doc)}</div>
  <div style="margin-top:18px">${heading(t.supplier)}${supplierLines(doc, t)}</div>
  <p style="margin-top:18px">${dates(doc, t, variant)}</p>${payment(doc, t)}${itemsTable(doc, t)}${recap(doc, t)}${totals(doc, t)}</div>`;
};

const boxed: Family = (doc, variant) => {
  const t = labelsOf(doc);
  const box = 'border:1px solid #333;padding:8px;vertical-align:top;width:50%';
  return `<div style="padding:40px 48px;font-size:13px">${titleLine(doc, t)}
  <table style="width:100%;margin-top:18px"><tr><td style="${box}">${heading(t.supplier)}${supplierLines(doc, t)}</td><td style="${box}">${heading(t.customer)}${customerLines(doc)}</td></tr></table>
  ${headerGrid(doc, t, variant, true)}${ruledItems(doc, t)}
  <table style="width:100%"><tr><td>${recap(doc, t)}</td><td>${totals(doc, t)}</td></tr></table>${payment(doc, t)}</div>`;
};

const compact: Family = (doc, variant) => {
  const t = labelsOf(doc);
  return `<div style="padding:36px 44px;font-size:12px"><div style="font-size:20px">${t.title}</div>
  <table style="width:100%;margin-top:14px"><tr><td style="width:50%">${heading(t.supplier)}${supplierLines(doc, t)}</td><td>${heading(t.customer)}${customerLines(doc)}</td></tr></table>
  ${headerGrid(doc, t, variant, false)}${plainItems(doc, t)}${totalsWithRates(doc, t)}${payment(doc, t)}</div>`;
};

const right_column: Family = (doc, variant) => {
  const t = labelsOf(doc);
  return `<div style="padding:40px 48px;font-size:13px">${titleLine(doc, t)}
  <table style="width:100%;margin-top:24px"><tr><td style="width:50%">${heading(t.customer)}${customerLines(doc)}<p style="margin-top:18px">${dates(doc, t, variant)}</p></td><td>${heading(t.supplier)}${supplierLines(doc, t)}${payment(doc, t)}</td></tr></table>
  ${itemsTable(doc, t)}${recap(doc, t)}${totals(doc, t)}</div>`;
};

/** The supplier only in the footer, in small print across three columns. */
const footer: Family = (doc, variant) => {
  const t = labelsOf(doc);
  const s = doc.fields.supplier;
  const a = s.address;
  const city = doc.lang === 'en' ? `${esc(a.municipality!)} ${a.postal_code}` : `${a.postal_code} ${esc(a.municipality!)}`;
  const foot = `<div style="position:absolute;left:48px;right:48px;bottom:36px;border-top:1px solid #999;padding-top:6px;font-size:10px"><table style="width:100%"><tr>
    <td style="width:34%">${t.supplier ? `${t.supplier}: ` : ''}<b>${esc(s.name!)}</b><br>${esc(a.street!)}<br>${city}</td><td style="width:33%">${ids(doc, t)}</td><td>${payment(doc, t).replace(/<\/?p[^>]*>/g, '')}</td></tr></table></div>`;
  return page(`<div style="padding:40px 48px">${titleLine(doc, t)}
  <table style="width:100%;margin-top:24px"><tr><td style="width:55%">${heading(t.customer)}${customerLines(doc)}</td><td>${dates(doc, t, variant)}</td></tr></table>
  ${itemsTable(doc, t)}${recap(doc, t)}${totals(doc, t)}</div>${foot}`);
};

/** A shaded sidebar on the left with the supplier and its bank; the document on the right. */
const sidebar: Family = (doc, variant) => {
  const t = labelsOf(doc);
  return `<table style="width:100%;font-size:12px"><tr><td style="width:200px;background:#e4e8ee;padding:36px 16px;height:1040px">${heading(t.supplier)}${supplierLines(doc, t)}${payment(doc, t)}</td>
  <td style="padding:36px 28px"><h1 style="margin:0;font-size:22px">${t.title}</h1><p>${t.number}: ${esc(doc.fields.document_number!)}<br>${dates(doc, t, variant)}</p>
  <div style="margin-top:14px">${heading(t.customer)}${customerLines(doc)}</div>${itemsTable(doc, t)}${recap(doc, t)}${totals(doc, t)}</td></tr></table>`;
};

/** The supplier top right, no label, name large; the purchaser labelled on the left. */
const unlabelled: Family = (doc, variant) => {
  const t = labelsOf(doc);
  const s = doc.fields.supplier;
  return `<div style="padding:40px 48px;font-size:13px"><table style="width:100%"><tr><td style="width:55%"><h1 style="margin:0;font-size:26px">${t.title}</h1>${t.number}: ${esc(doc.fields.document_number!)}</td>
  <td><div style="font-size:18px;font-weight:bold">${esc(s.name!)}</div>${supplierLines(doc, t).split('<br>').slice(1).join('<br>')}</td></tr></table>
  <table style="width:100%;margin-top:26px"><tr><td style="width:55%">${heading(t.customer)}${customerLines(doc)}</td><td>${dates(doc, t, variant)}</td></tr></table>
  ${itemsTable(doc, t)}${totalsWithRates(doc, t)}${payment(doc, t)}</div>`;
};

/** Two A4 pages: the header and the first items on page 1, the other items and the totals on page 2. */
const multipage: Family = (doc, variant) => {
  const t = labelsOf(doc);
  const items = doc.fields.line_items;
  const cut = Math.min(items.length - 2, 11);
  const part = (from: number, to: number): CorpusDocument => ({ ...doc, fields: { ...doc.fields, line_items: items.slice(from, to) }, itemRates: doc.itemRates.slice(from, to) });
  const s = doc.fields.supplier;
  const foot = (n: number) => `<div style="position:absolute;left:48px;right:48px;bottom:30px;font-size:10px;border-top:1px solid #999;padding-top:4px">${esc(s.name!)} · ${esc(doc.fields.document_number!)} · ${n}/2</div>`;
  const one = page(`<div style="padding:40px 48px">${titleLine(doc, t)}
    <table style="width:100%;margin-top:24px"><tr><td style="width:50%">${heading(t.supplier)}${supplierLines(doc, t)}</td><td>${heading(t.customer)}${customerLines(doc)}</td></tr></table>
    <p style="margin-top:18px">${dates(doc, t, variant)}</p>${itemsTable(part(0, cut), t)}</div>${foot(1)}`);
  const two = page(`<div style="padding:40px 48px">${itemsTable(part(cut, items.length), t)}${recap(doc, t)}${totals(doc, t)}${payment(doc, t)}</div>${foot(2)}`);
  return one + two;
};

export const families: Record<Exclude<Layout, 'classic' | 'letterhead' | 'receipt'>, Family> = {
  purchaser_first,
  boxed,
  compact,
  right_column,
  footer,
  sidebar,
  unlabelled,
  multipage,
  receipt_58: (doc, variant) => receiptHtml(doc, variant, RECEIPT_WIDTH.receipt_58! - 22, 10),
  receipt_wide: (doc, variant) => receiptHtml(doc, variant, RECEIPT_WIDTH.receipt_wide! - 22, 13),
};
