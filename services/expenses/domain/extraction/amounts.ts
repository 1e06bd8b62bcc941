// Totals, the VAT breakdown and the line items, chosen so that they add up: subtotal + VAT = total,
// each VAT row's base × rate = its VAT, the rows summing to subtotal and VAT total, the lines to the
// subtotal or the total.
import Decimal from 'decimal.js';
import { ExtractedFields } from '../../ports/extractor';
import { LABELS } from './labels';
import { Line } from './layout';
import { findDates } from './dates';
import { findMoney, findNumbers, money, NumberToken, sameMoney } from './numbers';

type VatRow = ExtractedFields['vat_breakdown'][number];
type Item = ExtractedFields['line_items'][number];

const PERCENT = /(?<![\d.,])(\d{1,2}(?:[.,]\d{1,2})?)\s?%/gu;

export interface Amounts {
  subtotal: string | null;
  vat_total: string | null;
  total: string | null;
  vat_breakdown: VatRow[];
  line_items: Item[];
  confidence: Record<string, number>;
  /** Lines holding totals, so dates or ids are not read from them. */
  itemLines: Set<number>;
}

/** The last money amount on the line, or on the next line when the label stands alone. */
function labelledAmount(lines: Line[], i: number, label: RegExp): NumberToken | null {
  const seg = lines[i].segments.findIndex((s) => label.test(s.text));
  const after = lines[i].segments.slice(Math.max(0, seg)).map((s) => s.text).join('  ');
  const m = label.exec(after);
  const rest = m ? after.slice(m.index + m[0].length) : after;
  const tokens = findMoney(rest.replace(PERCENT, ' '));
  if (tokens.length > 0) return tokens[tokens.length - 1];
  const next = lines[i + 1];
  if (next && findMoney(next.text).length === 1 && !/\p{L}{3}/u.test(next.text.replace(/EUR|CZK|GBP|USD|Kč/g, ''))) return findMoney(next.text)[0];
  return null;
}

export function findAmounts(lines: Line[], broad: boolean): Amounts {
  const confidence: Record<string, number> = {};
  const totals: { value: string; rank: number; line: number }[] = [];
  const subtotals: { value: string; line: number }[] = [];
  const vats: { value: string; line: number }[] = [];
  const totalSources = LABELS.total.source.slice(3, -1).split('|');
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i].text;
    const isSub = LABELS.subtotal.test(text);
    const hasRate = new RegExp(PERCENT.source, 'u').test(text);
    if (isSub) {
      const v = labelledAmount(lines, i, LABELS.subtotal);
      if (v && !hasRate) subtotals.push({ value: money(v.value), line: i });
    }
    if (!isSub && LABELS.vatTotal.test(text) && !hasRate && !LABELS.total.test(text.replace(LABELS.vatTotal, ''))) {
      const v = labelledAmount(lines, i, LABELS.vatTotal);
      if (v) vats.push({ value: money(v.value), line: i });
    }
    if (LABELS.total.test(text) && (!isSub || /s dph|incl|brutto/iu.test(text)) && !(LABELS.vatTotal.test(text) && /dph celk|celk\w* dph|vat total|total vat|mwst|ust/iu.test(text))) {
      const v = labelledAmount(lines, i, LABELS.total);
      if (v) {
        const rank = totalSources.findIndex((s) => new RegExp(s, 'iu').test(text));
        totals.push({ value: money(v.value), rank: rank < 0 ? 99 : rank, line: i });
      }
    }
  }

  const { rows: vat_breakdown, lines: vatLines } = findVatRows(lines);
  // The item table ends at the first summary line after its header ("USt-ID" in the letterhead above
  // the table is read as a VAT label, and must not end a table that has not begun).
  const header = findItemHeader(lines);
  const firstSummaryLine = Math.min(...[...totals, ...subtotals, ...vats].map((t) => t.line).filter((l) => l > header), ...vatLines.filter((l) => l > header), lines.length);
  const { items, itemLines } = findItems(lines, firstSummaryLine, broad);

  // Choose: the most specific total label; among equals the largest (the grand total comes last).
  totals.sort((a, b) => a.rank - b.rank || new Decimal(b.value).cmp(a.value));
  let total = totals[0]?.value ?? null;
  let subtotal = subtotals[subtotals.length - 1]?.value ?? null;
  let vat_total = vats[vats.length - 1]?.value ?? null;
  const rowsBase = vat_breakdown.reduce((s, r) => s.plus(r.base), new Decimal(0));
  const rowsVat = vat_breakdown.reduce((s, r) => s.plus(r.vat), new Decimal(0));

  // A total that agrees with subtotal + VAT beats a more specific label that does not.
  if (subtotal && vat_total) {
    const agreeing = totals.find((t) => sameMoney(new Decimal(subtotal!).plus(vat_total!), t.value));
    if (agreeing) total = agreeing.value;
  }
  if (vat_breakdown.length > 0) {
    if (!subtotal || (!sameMoney(subtotal, rowsBase) && total && sameMoney(rowsBase.plus(rowsVat), total))) subtotal = money(rowsBase);
    if (!vat_total || (!sameMoney(vat_total, rowsVat) && total && sameMoney(rowsBase.plus(rowsVat), total))) vat_total = money(rowsVat);
    if (!total) total = money(rowsBase.plus(rowsVat));
  }
  if (total && vat_total && !subtotal) subtotal = money(new Decimal(total).minus(vat_total));
  if (total && subtotal && !vat_total) vat_total = money(new Decimal(total).minus(subtotal));
  if (subtotal && vat_total && !total) total = money(new Decimal(subtotal).plus(vat_total));

  const addsUp = !!(total && subtotal && vat_total && sameMoney(new Decimal(subtotal).plus(vat_total), total));
  const rowsAddUp = vat_breakdown.length > 0 && !!subtotal && !!vat_total && sameMoney(rowsBase, subtotal) && sameMoney(rowsVat, vat_total);
  const itemsSum = items.reduce((s, it) => (it.total ? s.plus(it.total) : s), new Decimal(0));
  const itemsAddUp = items.length > 0 && !!(total || subtotal) && (sameMoney(itemsSum, subtotal ?? '0') || sameMoney(itemsSum, total ?? '0'));
  if (total) confidence.total = addsUp ? 0.97 : totals.length > 0 ? 0.75 : 0.6;
  if (subtotal) confidence.subtotal = addsUp ? 0.95 : 0.6;
  if (vat_total) confidence.vat_total = addsUp ? 0.95 : 0.6;
  if (vat_breakdown.length > 0) confidence.vat_breakdown = rowsAddUp ? 0.95 : 0.6;
  if (items.length > 0) confidence.line_items = itemsAddUp ? 0.9 : 0.5;
  return { subtotal, vat_total, total, vat_breakdown, line_items: items, confidence, itemLines };
}

/** Rows "rate % … base … vat" where base × rate / 100 = vat (to the cent); the last row per rate wins
 * (recap tables follow the item table). */
function findVatRows(lines: Line[]): { rows: VatRow[]; lines: number[] } {
  const byRate = new Map<string, { row: VatRow; line: number }>();
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i].text;
    const rates = [...text.matchAll(new RegExp(PERCENT.source, 'gu'))];
    if (rates.length !== 1) continue;
    const rate = new Decimal(rates[0][1].replace(',', '.'));
    if (rate.lte(0) || rate.gt(30)) continue;
    const amounts = findMoney(text.replace(rates[0][0], ' '.repeat(rates[0][0].length)));
    let found: VatRow | null = null;
    for (let a = 0; a < amounts.length && !found; a++) {
      for (let b = a + 1; b < amounts.length && !found; b++) {
        const base = new Decimal(amounts[a].value);
        const vat = new Decimal(amounts[b].value);
        if (base.gt(0) && vat.gt(0) && sameMoney(base.times(rate).div(100).toDecimalPlaces(2, Decimal.ROUND_HALF_UP), vat, '0.021')) {
          found = { rate: rate.toString(), base: money(base), vat: money(vat) };
        }
      }
    }
    if (found) byRate.set(found.rate, { row: found, line: i });
  }
  const rows = [...byRate.values()].sort((a, b) => a.line - b.line);
  return { rows: rows.map((r) => r.row), lines: rows.map((r) => r.line) };
}

const SUMMARY_LABEL = new RegExp([LABELS.vatRecap, LABELS.total, LABELS.subtotal, LABELS.vatTotal, LABELS.itemHeader].map((r) => r.source).join('|'), 'iu');

type Role = 'name' | 'quantity' | 'unit_price' | 'total' | 'rate' | 'other';
interface Column {
  role: Role;
  x0: number;
  x1: number;
}

const RATE_HEADER = /%|\b(?:dph|vat|mwst|ust)\b/iu;

function roleOf(text: string): Role {
  if (LABELS.itemHeaderAmount.test(text)) return 'total';
  if (LABELS.itemHeaderUnitPrice.test(text)) return 'unit_price';
  if (LABELS.itemHeaderQuantity.test(text)) return 'quantity';
  if (RATE_HEADER.test(text)) return 'rate';
  if (LABELS.itemHeader.test(text)) return 'name';
  return 'other';
}

/** The item table's header: a row of at least two column labels (a description and a quantity, price
 * or amount), no amounts and no dates (a row of labels over dates is the document's header grid). */
function findItemHeader(lines: Line[]): number {
  return lines.findIndex(isItemHeader);
}

function isItemHeader(l: Line): boolean {
  if (l.segments.length < 2 || findMoney(l.text).length > 0 || findDates(l.text).length > 0 || !LABELS.itemHeader.test(l.text)) return false;
  const roles = l.segments.map((seg) => roleOf(seg.text));
  return roles.includes('name') && roles.filter((r) => r !== 'other' && r !== 'name').length >= 1;
}

/** The header's columns, when it names the name and total columns (else the row heuristics below). */
function headerColumns(line: Line): Column[] | null {
  const columns = line.segments.map((seg) => ({ role: roleOf(seg.text), x0: seg.x0, x1: seg.x1 }));
  const has = (role: Role) => columns.filter((c) => c.role === role).length === 1;
  return has('name') && has('total') ? columns : null;
}

/**
 * A row read by the header's columns: each segment goes to the column it overlaps most (numbers align
 * right under their header, names left). 'text' for a line with words in the name column only; null
 * when the row does not fit (no total, or quantity × unit price ≠ total): the row heuristics decide.
 */
function rowByColumns(line: Line, columns: Column[]): Item | 'text' | null {
  const cells = new Map<Role, string[]>();
  for (const seg of line.segments) {
    let best: Column | undefined;
    let bestScore = -Infinity;
    for (const c of columns) {
      const overlap = Math.min(seg.x1, c.x1) - Math.max(seg.x0, c.x0);
      const score = overlap > 0 ? overlap : -Math.min(Math.abs(seg.x1 - c.x1), Math.abs(seg.x0 - c.x0));
      if (score > bestScore) {
        bestScore = score;
        best = c;
      }
    }
    if (best) cells.set(best.role, [...(cells.get(best.role) ?? []), seg.text]);
  }
  const text = (role: Role) => (cells.get(role) ?? []).join(' ').trim();
  const name = text('name');
  const totalToken = findMoney(text('total').replace(PERCENT, ' ')).pop();
  if (!totalToken) {
    // Within the name column's width (a page footer or a note across the page is not a wrapped name).
    const nameColumn = columns.find((c) => c.role === 'name')!;
    const nextX0 = Math.min(...columns.filter((c) => c.x0 > nameColumn.x0).map((c) => c.x0), 1);
    const inside = line.segments.every((seg) => seg.x0 >= nameColumn.x0 - 0.02 && seg.x1 <= nextX0 + 0.01);
    const onlyName = inside && /\p{L}{2}/u.test(name) && findMoney(name).length === 0;
    return onlyName ? 'text' : null;
  }
  if (!/\p{L}{2}/u.test(name) && name !== '') return null;
  const quantityToken = findNumbers(text('quantity'))[0];
  const unitToken = findMoney(text('unit_price'))[0];
  const total = new Decimal(totalToken.value);
  if (quantityToken && unitToken) {
    if (!sameMoney(new Decimal(quantityToken.value).times(unitToken.value), total, '0.011')) return null;
    return { name, quantity: new Decimal(quantityToken.value).toString(), unit_price: money(unitToken.value), total: money(total) };
  }
  if (unitToken) {
    const ratio = total.div(unitToken.value);
    return ratio.isInteger() && ratio.gte(1) ? { name, quantity: ratio.toString(), unit_price: money(unitToken.value), total: money(total) } : null;
  }
  if (quantityToken && new Decimal(quantityToken.value).gt(0)) {
    return { name, quantity: new Decimal(quantityToken.value).toString(), unit_price: money(total.div(quantityToken.value)), total: money(total) };
  }
  return columns.some((c) => c.role === 'quantity' || c.role === 'unit_price') ? null : { name, quantity: '1', unit_price: money(total), total: money(total) };
}

const UNIT = /^(?:ks|kus|kusů|kusov|h|hod|hod\.|hours?|hrs?|pcs?|stk\.?|stück|std\.?|m|m2|kg|l|x|×|ea|days?|dni|dní|tage?|mon\.?|month|měs\.?|mes\.?)$/iu;

/** The item table: from its header (or the end of the letterhead on receipts) to the first summary
 * line. An item line has a name and a money amount last; quantity × unit price = its total. */
function findItems(lines: Line[], end: number, broad: boolean): { items: Item[]; itemLines: Set<number> } {
  const itemLines = new Set<number>();
  const start = findItemHeader(lines);
  const hasHeader = start >= 0 && start < end;
  const columns = hasHeader ? headerColumns(lines[start]) : null;
  const items: Item[] = [];
  let pendingName: string | null = null;
  let wrapped: string | null = null;
  for (let i = hasHeader ? start + 1 : 0; i < end; i++) {
    const segments = lines[i].segments;
    if (columns && isItemHeader(lines[i])) {
      // The header repeated on the next page.
      pendingName = null;
      wrapped = null;
      continue;
    }
    if (columns) {
      const row = rowByColumns(lines[i], columns);
      if (row === 'text') {
        // Words in the name column only: the previous item's name wrapped onto this line (a table's
        // cells are aligned at the top), or, before any item, the first item's name.
        const words = segments.map((seg) => seg.text).join(' ');
        const itemLine = i - 1 - (wrapped ? wrapped.split('\n').length : 0);
        if (items.length > 0 && itemLines.has(itemLine) && lines[itemLine].page === lines[i].page) wrapped = wrapped ? `${wrapped}\n${words}` : words;
        else pendingName = [pendingName, words].filter(Boolean).join(' ');
        continue;
      }
      if (row) {
        if (wrapped) items[items.length - 1].name = `${items[items.length - 1].name} ${wrapped.replace(/\n/g, ' ')}`;
        wrapped = null;
        items.push({ ...row, name: (row.name || pendingName || '').replace(/\s+/g, ' ').trim() });
        pendingName = null;
        itemLines.add(i);
        continue;
      }
    }
    // In a table the first column is the name, digits and all ("Hosting na 12 mesiacov", "Mlieko 1,5 %").
    const tableRow = segments.length >= 2 && /\p{L}{2}/u.test(segments[0].text) && findMoney(segments[0].text).length === 0;
    const rest = (tableRow ? segments.slice(1).map((s) => s.text).join('  ') : lines[i].text).replace(PERCENT, ' ');
    const text = tableRow ? `${segments[0].text}  ${rest}` : rest;
    const tokens = findMoney(rest);
    const firstNumber = tableRow ? undefined : findNumbers(rest)[0];
    const name = (tableRow ? segments[0].text : firstNumber ? rest.slice(0, firstNumber.index) : rest).replace(/\s+/g, ' ').trim();
    if (tokens.length === 0) {
      // A receipt's name line, with "2 x 0,15  0,30" on the next line; digits and all ("Mlieko 1,5 %").
      const whole = lines[i].text.replace(/\s+/g, ' ').trim();
      pendingName = /\p{L}{2}/u.test(whole) && !/[:]/.test(whole) ? whole : null;
      continue;
    }
    const itemName = /\p{L}{2}/u.test(name) ? name : pendingName;
    pendingName = null;
    if (!itemName || (!hasHeader && !broad && /[:]/.test(itemName))) continue;
    if (!hasHeader && (LABELS.registrationId.test(text) || LABELS.vatId.test(text) || LABELS.taxId.test(text) || LABELS.issueDate.test(text) || LABELS.genericDate.test(text) || LABELS.documentNumber.test(text))) continue;
    const numbers = findNumbers(tableRow ? rest : rest.slice(firstNumber && /\p{L}{2}/u.test(name) ? firstNumber.index : 0)).filter((n) => !/^\d{4,}$/.test(n.raw) || n.moneyLike);
    const total = tokens[tokens.length - 1].value;
    let quantity: string | null = null;
    let unit_price: string | null = null;
    const x = /(?<![\d.,])(\d+(?:[.,]\d+)?)\s*(?:x|×|\*)\s*(\d[\d .,]*\d)/iu.exec(rest);
    if (x) {
      quantity = new Decimal(x[1].replace(',', '.')).toString();
      unit_price = findMoney(x[2])[0]?.value ?? null;
    } else {
      const before = numbers.slice(0, -1);
      outer: for (let q = 0; q < before.length; q++) {
        for (let u = q + 1; u < before.length; u++) {
          if (!before[u].moneyLike) continue;
          const qv = new Decimal(before[q].value);
          if (qv.lte(0)) continue;
          const product = qv.times(before[u].value);
          if (sameMoney(product, total, '0.011') || before.slice(u + 1).some((later) => sameMoney(product, later.value))) {
            quantity = qv.toString();
            unit_price = money(before[u].value);
            break outer;
          }
        }
      }
      if (!quantity && before.length === 0) {
        quantity = '1';
        unit_price = money(total);
      }
      // A quantity column OCR dropped: the unit price divides the total exactly.
      const lastUnit = [...before].reverse().find((n) => n.moneyLike);
      if (!quantity && lastUnit && new Decimal(lastUnit.value).gt(0)) {
        const ratio = new Decimal(total).div(lastUnit.value);
        if (ratio.isInteger() && ratio.gte(1) && ratio.lte(1000)) {
          quantity = ratio.toString();
          unit_price = money(lastUnit.value);
        }
      }
    }
    items.push({ name: itemName.replace(/\s+\S+$/u, (w) => (UNIT.test(w.trim()) ? '' : w)).trim(), quantity, unit_price: unit_price ? money(unit_price) : null, total: money(total) });
    itemLines.add(i);
  }
  // The last item's name wrapped onto the lines before the table ends.
  if (wrapped && items.length > 0 && !SUMMARY_LABEL.test(wrapped)) items[items.length - 1].name = `${items[items.length - 1].name} ${wrapped.replace(/\n/g, ' ')}`;
  return { items, itemLines };
}
