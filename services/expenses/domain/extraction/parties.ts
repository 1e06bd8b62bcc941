// The supplier: its block (under "Dodávateľ", "Supplier", "Lieferant"…) or, on receipts and
// letterheads, the first lines of the document; its identifiers chosen by their checksums.
import { ExtractedSupplier } from '../../ports/extractor';
import { digitsFromLookalikes, isValidIco, isValidVatId } from './checks';
import { blockBelow, valuesAfterLabel } from './context';
import { COUNTRIES, LABELS, LEGAL_FORM, TITLES } from './labels';
import { Line } from './layout';

export interface SupplierResult {
  supplier: ExtractedSupplier;
  confidence: Record<string, number>;
  /** Lines that belong to the customer (ignored when looking for the supplier's ids). */
  customerLines: Set<number>;
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
  const customerLines = new Set<number>();
  const stop = new RegExp(`${LABELS.customerBlock.source}|${LABELS.supplierBlock.source}|${LABELS.documentNumber.source}|${LABELS.itemHeader.source}`, 'iu');
  for (let i = 0; i < lines.length; i++) {
    if (LABELS.customerBlock.test(lines[i].text)) {
      for (const b of blockBelow(lines, i, LABELS.customerBlock, stop, 9)) customerLines.add(b.line);
    }
  }
  let block: { text: string; line: number }[] = [];
  let fromLabel = false;
  const labelLine = lines.findIndex((l) => l.segments.some((s) => LABELS.supplierBlock.test(s.text) && s.text.length < 40));
  if (labelLine >= 0) {
    block = blockBelow(lines, labelLine, LABELS.supplierBlock, stop, 9);
    fromLabel = block.length > 0;
    for (const b of block) customerLines.delete(b.line);
  }
  if (!fromLabel) {
    // Letterhead or receipt: the lines at the top, before the first labelled field or the customer.
    for (let i = 0; i < Math.min(lines.length, 10); i++) {
      const text = lines[i].segments[0]?.text ?? '';
      if (customerLines.has(i) || (ANY_LABEL.test(text) && !ID_LINE.test(text))) {
        if (block.length > 0) break;
        continue;
      }
      if (TITLES.test(text) && block.length === 0) continue;
      block.push({ text, line: i });
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
  const blockLines = new Set(block.map((b) => b.line));
  const scopes = fromLabel ? [(i: number) => blockLines.has(i) || isBlockNeighbour(i, block), (i: number) => !customerLines.has(i)] : [(i: number) => !customerLines.has(i)];
  for (const inScope of scopes) {
    readIds(lines, inScope, supplier, confidence, broad);
    if (supplier.registration_id || supplier.vat_id) break;
  }
  if (!supplier.address.country_alpha2 && supplier.vat_id) {
    supplier.address.country_alpha2 = supplier.vat_id.slice(0, 2) === 'EL' ? 'GR' : supplier.vat_id.slice(0, 2);
    confidence['supplier.address.country_alpha2'] = 0.7;
  }
  return { supplier, confidence, customerLines };
}

/** Ids printed a few lines under the block (supplier blocks end at the ids, sometimes after a gap). */
function isBlockNeighbour(i: number, block: { line: number }[]): boolean {
  if (block.length === 0) return false;
  const last = block[block.length - 1].line;
  return i > last && i <= last + 3;
}

function readIds(lines: Line[], inScope: (i: number) => boolean, supplier: ExtractedSupplier, confidence: Record<string, number>, broad: boolean): void {
  for (let i = 0; i < lines.length; i++) {
    if (!inScope(i)) continue;
    const text = lines[i].text;
    for (const seg of lines[i].segments) {
      // The VAT id label first: "IČ DPH" contains "IČ".
      if (!supplier.vat_id && LABELS.vatId.test(seg.text)) {
        const vat = firstVatId(valuesAfterLabel(lines, i, LABELS.vatId).map((v) => v.text), broad);
        if (vat) {
          supplier.vat_id = vat;
          confidence['supplier.vat_id'] = 0.97;
          continue;
        }
      }
      if (!supplier.tax_id && LABELS.taxId.test(seg.text) && !LABELS.vatId.test(seg.text)) {
        const value = valuesAfterLabel(lines, i, LABELS.taxId)[0]?.text.split(/\s{2,}/)[0];
        const token = value?.match(/^[A-Z]{0,2}[\d/ -]{6,16}\d/u)?.[0]?.trim();
        if (token) {
          if (/^[A-Z]{2}/.test(token)) {
            const vat = firstVatId([token], broad);
            if (vat && !supplier.vat_id) {
              supplier.vat_id = vat;
              confidence['supplier.vat_id'] = 0.95;
            }
          } else {
            supplier.tax_id = token.replace(/\s+/g, ' ');
            confidence['supplier.tax_id'] = /^\d{10}$/.test(token) ? 0.9 : 0.8;
          }
          continue;
        }
      }
      if (!supplier.registration_id && LABELS.registrationId.test(seg.text) && !LABELS.vatId.test(seg.text)) {
        const value = valuesAfterLabel(lines, i, LABELS.registrationId)[0]?.text ?? '';
        const ico = value.match(/^\d[\d ]{5,9}\d/)?.[0]?.replace(/\s/g, '') ?? (broad ? digitsFromLookalikes(value.split(/\s/)[0] ?? '').match(/^\d{8}$/)?.[0] : undefined);
        if (ico && ico.length === 8 && isValidIco(ico)) {
          supplier.registration_id = ico;
          confidence['supplier.registration_id'] = 0.97;
        } else if (/^(?:HRB?|HRA)\s?\d+/i.test(value) || /hrb?\b/i.test(seg.text)) {
          const hr = (/^(?:HRB?|HRA)\s?\d+/i.test(value) ? value : `${seg.text.match(/HR[AB]?\b/i)?.[0] ?? 'HRB'} ${value}`).match(/(?:HR[AB]?)\s?\d+/i)?.[0];
          if (hr) {
            supplier.registration_id = hr.replace(/\s+/, ' ');
            confidence['supplier.registration_id'] = 0.8;
          }
        } else if (ico && /^\d{6,8}$/.test(ico) && !/ič/i.test(seg.text)) {
          supplier.registration_id = ico;
          confidence['supplier.registration_id'] = 0.7;
        }
      }
    }
    // Unlabelled VAT ids ("SK2020123456" on a receipt's header line).
    if (!supplier.vat_id) {
      const vat = firstVatId([text], false);
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
