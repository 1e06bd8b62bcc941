// The supplier: its block (under "Dodávateľ", "Supplier", "Lieferant"…) or, on receipts and
// letterheads, the first lines of the document; its identifiers chosen by their checksums.
import { ExtractedSupplier } from '../../ports/extractor';
import { digitsFromLookalikes, isValidIco, isValidVatId } from './checks';
import { BlockLine, blockBelow, segmentBelow } from './context';
import { COUNTRIES, LABELS, LEGAL_FORM, TITLES } from './labels';
import { Line, Segment } from './layout';

export interface SupplierResult {
  supplier: ExtractedSupplier;
  confidence: Record<string, number>;
  /** The document without the customer's block (its segments removed, line indices kept): where the
   * supplier's ids and account are looked for. The block is told by its label and its column, per
   * segment: the supplier's block often shares its lines, one column over. */
  outsideCustomer: Line[];
}

const ANY_LABEL = new RegExp(
  [LABELS.customerBlock, LABELS.supplierBlock, LABELS.documentNumber, LABELS.issueDate, LABELS.dueDate, LABELS.iban, LABELS.itemHeader].map((r) => r.source).join('|'),
  'iu',
);
const ID_LINE = new RegExp([LABELS.registrationId, LABELS.vatId, LABELS.taxId].map((r) => r.source).join('|'), 'iu');
const POSTAL = /^(?:(?:[A-Z]{1,2}-)?(\d{3} ?\d{2}|\d{5}|\d{4})\s+(\p{L}[\p{L} .\-/\d]*?)|(\p{L}[\p{L} .\-]*?),?\s+(\d{3} ?\d{2}|\d{5}))$|^(\p{L}[\p{L} .\-]*?)\s+([A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2})$/u;
const STREET = /\p{L}.*\s\d+[a-zA-Z]?(?:\/\d+[a-zA-Z]?)?\b|^\d+[a-zA-Z]?\s+\p{L}/u;

export function findSupplier(lines: Line[], broad: boolean): SupplierResult {
  const confidence: Record<string, number> = {};
  const customerSegments = new Map<number, Set<Segment>>();
  const stop = new RegExp(`${LABELS.customerBlock.source}|${LABELS.supplierBlock.source}|${LABELS.documentNumber.source}|${LABELS.itemHeader.source}`, 'iu');
  for (let i = 0; i < lines.length; i++) {
    // Per segment: a label anchored at its start ("^to", "^an") heads its own column, not only the line's first.
    if (lines[i].segments.some((seg) => LABELS.customerBlock.test(seg.text) && seg.text.length < 40)) {
      for (const b of blockBelow(lines, i, LABELS.customerBlock, stop, 9)) {
        // The block's own segments of that line (blockBelow may give a trimmed copy of the label's segment).
        const own = lines[b.line].segments.filter((s) => b.segments.some((x) => x.x0 === s.x0 && x.x1 === s.x1));
        customerSegments.set(b.line, new Set([...(customerSegments.get(b.line) ?? []), ...own]));
      }
    }
  }
  const isCustomer = (i: number, seg: Segment) => customerSegments.get(i)?.has(seg) ?? false;
  let block: BlockLine[] = [];
  let fromLabel = false;
  const labelLine = lines.findIndex((l) => l.segments.some((s) => LABELS.supplierBlock.test(s.text) && s.text.length < 40));
  if (labelLine >= 0) {
    block = blockBelow(lines, labelLine, LABELS.supplierBlock, stop, 9);
    fromLabel = block.length > 0;
    for (const b of block) for (const seg of lines[b.line].segments) if (b.segments.some((x) => x.x0 === seg.x0 && x.x1 === seg.x1)) customerSegments.get(b.line)?.delete(seg);
  }
  if (!fromLabel) block = blockByIds(lines, isCustomer);
  if (!fromLabel && block.length === 0) {
    // Letterhead or receipt: the lines at the top, before the first labelled field or the customer.
    for (let i = 0; i < Math.min(lines.length, 10); i++) {
      const text = lines[i].segments[0]?.text ?? '';
      if ((lines[i].segments[0] && isCustomer(i, lines[i].segments[0])) || (ANY_LABEL.test(text) && !ID_LINE.test(text))) {
        if (block.length > 0) break;
        continue;
      }
      if (TITLES.test(text) && block.length === 0) continue;
      block.push({ text, line: i, segments: lines[i].segments.slice(0, 1) });
    }
  }

  const supplier: ExtractedSupplier = {
    name: null,
    registration_id: null,
    tax_id: null,
    vat_id: null,
    address: { street: null, municipality: null, postal_code: null, country_alpha2: null },
  };
  // Name: a line with a legal form, else the first line that is neither an id line nor an address.
  const nameLine = block.find((b) => LEGAL_FORM.test(b.text) && !ID_LINE.test(b.text)) ?? block.find((b) => !ID_LINE.test(b.text) && !POSTAL.test(b.text) && /\p{L}{2}/u.test(b.text));
  if (nameLine) {
    supplier.name = cleanName(nameLine.text);
    confidence['supplier.name'] = fromLabel ? 0.9 : LEGAL_FORM.test(nameLine.text) ? 0.85 : 0.6;
  }
  const nameIndex = nameLine ? block.indexOf(nameLine) : -1;
  for (const b of block.slice(nameIndex + 1)) {
    const text = b.text.replace(/,\s*$/, '').trim();
    if (ID_LINE.test(text)) continue;
    const country = countryOf(text);
    if (country && !supplier.address.country_alpha2 && text.length < 30) {
      supplier.address.country_alpha2 = country;
      confidence['supplier.address.country_alpha2'] = 0.9;
      continue;
    }
    // "Hlavná 12, 811 01 Bratislava" on one line.
    const parts = text.split(/,\s*/);
    for (const part of parts) {
      const postal = POSTAL.exec(part.trim());
      if (postal && !supplier.address.postal_code) {
        const code = postal[1] ?? postal[4] ?? postal[6];
        const city = postal[2] ?? postal[3] ?? postal[5];
        supplier.address.postal_code = normalizePostal(code);
        supplier.address.municipality = city.trim();
        confidence['supplier.address.postal_code'] = 0.85;
        confidence['supplier.address.municipality'] = 0.8;
      } else if (STREET.test(part) && !supplier.address.street && !supplier.address.postal_code && !LEGAL_FORM.test(part)) {
        supplier.address.street = part.trim();
        confidence['supplier.address.street'] = 0.8;
      } else if (countryOf(part) && !supplier.address.country_alpha2) {
        supplier.address.country_alpha2 = countryOf(part);
        confidence['supplier.address.country_alpha2'] = 0.85;
      }
    }
  }

  // Identifiers: inside the supplier's block first, else anywhere outside the customer's block.
  if (fromLabel) {
    // The block's own column only: the customer's ids often sit on the same lines, one column over.
    const page = lines[block[0].line].page;
    readIds(block.map((b) => ({ page, segments: b.segments, text: b.text })), () => true, supplier, confidence, broad);
  }
  const outsideCustomer = lines.map((line, i) => {
    const segments = line.segments.filter((seg) => !isCustomer(i, seg));
    return segments.length === line.segments.length ? line : { ...line, segments, text: segments.map((seg) => seg.text).join('  ') };
  });
  if (!supplier.registration_id && !supplier.vat_id) readIds(outsideCustomer, () => true, supplier, confidence, broad);
  if (!supplier.address.country_alpha2 && supplier.vat_id) {
    supplier.address.country_alpha2 = supplier.vat_id.slice(0, 2) === 'EL' ? 'GR' : supplier.vat_id.slice(0, 2);
    confidence['supplier.address.country_alpha2'] = 0.7;
  }
  return { supplier, confidence, outsideCustomer };
}

/**
 * The supplier's block found by its ids, wherever it sits (letterhead, right column, sidebar, footer):
 * the first id outside the customer's block (a labelled IČO/VAT/tax id or a valid VAT id) anchors it;
 * the supplier's name is the company name (a legal form) nearest to that anchor — above it or beside
 * it, outside the customer's block; the block is that name and the lines under it in its column.
 * Empty when there are no ids or no company name near them (then the letterhead rule decides).
 */
function blockByIds(lines: Line[], isCustomer: (i: number, seg: Segment) => boolean): BlockLine[] {
  let anchor: { line: number; seg: Segment } | null = null;
  for (let i = 0; i < lines.length && !anchor; i++) {
    const seg = lines[i].segments.find((sg) => !isCustomer(i, sg) && (ID_LINE.test(sg.text) || firstVatId([sg.text], false)));
    if (seg) anchor = { line: i, seg };
  }
  if (!anchor) return [];
  let name: { line: number; seg: Segment; cost: number } | null = null;
  for (let j = Math.max(0, anchor.line - 8); j <= Math.min(lines.length - 1, anchor.line + 1); j++) {
    if (lines[j].page !== lines[anchor.line].page) continue;
    for (const seg of lines[j].segments) {
      if (isCustomer(j, seg) || !LEGAL_FORM.test(seg.text) || ID_LINE.test(seg.text) || seg.text.length > 60) continue;
      // Lines count more than columns: the name above the ids in its column beats one beside them.
      const cost = Math.abs(anchor.line - j) + (j > anchor.line ? 2 : 0) + 10 * Math.abs(seg.x0 - anchor.seg.x0);
      if (!name || cost < name.cost) name = { line: j, seg, cost };
    }
  }
  if (!name) return [];
  const text = name.seg.text.replace(LABELS.supplierBlock, '').replace(/^[\s:]+/, '');
  const out: BlockLine[] = [{ text, line: name.line, segments: [{ ...name.seg, text }] }];
  let skipped = 0;
  for (let j = name.line + 1; j < lines.length && out.length < 8 && lines[j].page === lines[name.line].page; j++) {
    // Left-aligned under the name, or centred with it (receipts).
    const centre = (sg: Segment) => (sg.x0 + sg.x1) / 2;
    const inColumn = lines[j].segments.filter((sg) => (Math.abs(sg.x0 - name!.seg.x0) < 0.03 || Math.abs(centre(sg) - centre(name!.seg)) < 0.03) && !isCustomer(j, sg));
    if (inColumn.length === 0) {
      const crosses = lines[j].segments.some((sg) => sg.x0 < name!.seg.x0 - 0.03 && sg.x1 > name!.seg.x0);
      if (crosses || ++skipped > 3) break;
      continue;
    }
    if (ANY_LABEL.test(inColumn[0].text) && !ID_LINE.test(inColumn[0].text)) break;
    out.push({ text: inColumn.map((sg) => sg.text).join('  '), line: j, segments: inColumn });
  }
  return out;
}

type IdKind = 'vat' | 'tax' | 'reg';
/** One pass over a segment finds every id label; at one position the VAT label ("IČ DPH") beats the
 * shorter registration label ("IČ"). */
const ID_LABELS = new RegExp(`(?<vat>${LABELS.vatId.source})|(?<tax>${LABELS.taxId.source})|(?<reg>${LABELS.registrationId.source})`, 'giu');

/** Label → value pairs of a segment: "IČO: 123 · DIČ: 456" gives two; an empty value is read from
 * the next segment or the segment below. */
function labelledIds(lines: Line[], i: number): { kind: IdKind; value: string; labelText: string }[] {
  const out: { kind: IdKind; value: string; labelText: string }[] = [];
  const segments = lines[i].segments;
  segments.forEach((seg, k) => {
    const matches = [...seg.text.matchAll(ID_LABELS)];
    matches.forEach((m, n) => {
      const from = m.index! + m[0].length;
      const to = n + 1 < matches.length ? matches[n + 1].index! : seg.text.length;
      let value = seg.text.slice(from, to).replace(/^[\s:.#]+/u, '').replace(/[\s·|,;]+$/u, '').trim();
      if (!value && n === matches.length - 1) value = segments[k + 1]?.text ?? segmentBelow(lines, i, seg)?.text ?? '';
      const kind: IdKind = m.groups!.vat ? 'vat' : m.groups!.tax ? 'tax' : 'reg';
      out.push({ kind, value, labelText: m[0] });
    });
  });
  return out;
}

function readIds(lines: Line[], inScope: (i: number) => boolean, supplier: ExtractedSupplier, confidence: Record<string, number>, broad: boolean): void {
  for (let i = 0; i < lines.length; i++) {
    if (!inScope(i)) continue;
    for (const { kind, value, labelText } of labelledIds(lines, i)) {
      if (kind === 'vat' && !supplier.vat_id) {
        const vat = firstVatId([value], broad);
        if (vat) {
          supplier.vat_id = vat;
          confidence['supplier.vat_id'] = 0.97;
        }
      } else if (kind === 'tax' && !supplier.tax_id) {
        const token = value.match(/^[A-Z]{0,2}[\d/ -]{6,16}\d/u)?.[0]?.trim();
        if (!token) continue;
        if (/^[A-Z]{2}/.test(token)) {
          // "DIČ: CZ12345678" — in Czechia the DIČ is the VAT id.
          const vat = firstVatId([token], broad);
          if (vat && !supplier.vat_id) {
            supplier.vat_id = vat;
            confidence['supplier.vat_id'] = 0.95;
          }
        } else {
          supplier.tax_id = token.replace(/\s+/g, ' ');
          confidence['supplier.tax_id'] = /^\d{10}$/.test(token) ? 0.9 : 0.8;
        }
      } else if (kind === 'reg' && !supplier.registration_id) {
        const digits = value.match(/^\d[\d ]{5,9}\d/)?.[0]?.replace(/\s/g, '') ?? (broad ? digitsFromLookalikes(value.split(/\s/)[0] ?? '').match(/^\d{8}$/)?.[0] : undefined);
        // "Handelsregister: Amtsgericht Köln, HRB" with the number wrapped onto the next line.
        const wrapped = /HR[AB]$/i.test(value) ? `${value} ${lines[i + 1]?.segments[0]?.text ?? ''}` : value;
        const register = `${labelText} ${wrapped}`.match(/\b(HR[AB])\s?(\d{2,6})\b/i);
        if (digits && digits.length === 8 && isValidIco(digits)) {
          supplier.registration_id = digits;
          confidence['supplier.registration_id'] = 0.97;
        } else if (register) {
          supplier.registration_id = `${register[1].toUpperCase()} ${register[2]}`;
          confidence['supplier.registration_id'] = 0.85;
        } else if (digits && /^\d{6,8}$/.test(digits) && !/ič/iu.test(labelText)) {
          // A company number without a checksum (UK Companies House): taken when labelled.
          supplier.registration_id = digits;
          confidence['supplier.registration_id'] = 0.75;
        }
      }
    }
    // Unlabelled VAT ids ("SK2020123456" on a receipt's header line).
    if (!supplier.vat_id) {
      const vat = firstVatId(lines[i].segments.map((seg) => seg.text), false);
      if (vat) {
        supplier.vat_id = vat;
        confidence['supplier.vat_id'] = 0.85;
      }
    }
  }
}

/** The first VAT id in the texts that passes its country's check. */
function firstVatId(texts: string[], broad: boolean): string | null {
  for (const text of texts) {
    for (const m of text.toUpperCase().matchAll(/\b([A-Z]{2})[\s-]?([0-9A-Z][0-9A-Z .-]{6,14}[0-9A-Z])/g)) {
      const candidates = [m[2].replace(/[\s.-]/g, '')];
      if (broad) candidates.push(digitsFromLookalikes(candidates[0]));
      for (let body of candidates) {
        // Trim trailing words that ran into the id ("DE123456789 Steuernr").
        for (let len = body.length; len >= 8; len--) {
          body = body.slice(0, len);
          if (isValidVatId(m[1] + body)) return m[1] + body;
        }
      }
    }
  }
  return null;
}

function cleanName(text: string): string {
  return text.replace(/\s{2,}.*/, '').replace(/[,:;]+$/, '').trim();
}

function countryOf(text: string): string | null {
  for (const [re, code] of COUNTRIES) if (re.test(text)) return code;
  return null;
}

function normalizePostal(code: string): string {
  const compact = code.replace(/\s/g, '');
  return /^\d{5}$/.test(compact) && /\s/.test(code) ? `${compact.slice(0, 3)} ${compact.slice(3)}` : code.trim();
}
