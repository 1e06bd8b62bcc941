// The labelled documents of the extraction corpus: seeded, so the same seed always gives the same
// invoices and receipts (and their truth). Ids are real-looking and pass their checksums; amounts add up.
import Decimal from 'decimal.js';
import { checkVAT, countries } from 'jsvat';
import type { ExtractedFields } from '../../../services/expenses/ports/extractor';

export type Lang = 'sk' | 'cs' | 'en' | 'de';
/** Layout families (split.ts says which are tuned and which are held out). */
export type Layout =
  | 'classic' | 'letterhead' | 'receipt'
  | 'purchaser_first' | 'boxed' | 'compact' | 'receipt_58'
  | 'right_column' | 'footer' | 'sidebar' | 'multipage' | 'unlabelled' | 'receipt_wide';
export type Wording = 'canonical' | 'abbreviated' | 'synonyms' | 'bare';
export type Scenario = 'standard' | 'customer_ids' | 'card_paid' | 'long_items';
export type Split = 'tuned' | 'held_out';
/** How photos and scans are degraded: the first corpus's mild profile, or the one phones and office scanners give. */
export type Degradation = 'mild' | 'real';

export const RECEIPT_LAYOUTS: readonly Layout[] = ['receipt', 'receipt_58', 'receipt_wide'];
export const isReceipt = (layout: Layout) => RECEIPT_LAYOUTS.includes(layout);

export interface CorpusDocument {
  id: string;
  lang: Lang;
  layout: Layout;
  wording: Wording;
  scenario: Scenario;
  split: Split;
  degradation: Degradation;
  fields: ExtractedFields;
  customer: { name: string; street: string; postal: string; city: string; registration_id: string | null; tax_id: string | null; vat_id: string | null; iban: string };
  taxPointDate: string;
  /** Rate per line item (the label keeps only name, quantity, unit price, total). */
  itemRates: string[];
  receiptTime: string;
}

/** mulberry32, seeded: the one the seeding command uses (deploy/seed/fake.ts). */
import { random as rng } from '../../../deploy/seed/fake';

export { rng };

export class Rand {
  constructor(readonly next: () => number) {}
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.next() * list.length)];
  }
  digits(n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += String(this.int(0, 9));
    return s;
  }
}

function ico(r: Rand): string {
  for (;;) {
    const base = `${r.int(1, 9)}${r.digits(6)}`;
    const sum = [...base].reduce((acc, d, i) => acc + Number(d) * (8 - i), 0);
    const rem = sum % 11;
    const check = rem === 0 ? 1 : rem === 1 ? 0 : 11 - rem;
    if (check <= 9) return base + check;
  }
}

function vat(prefix: string, body: () => string): string {
  for (;;) {
    const v = prefix + body();
    if (checkVAT(v, countries).isValid) return v;
  }
}

function iban(country: string, bban: string): string {
  const numeric = (bban + country + '00').replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  let rem = 0;
  for (const ch of numeric) rem = (rem * 10 + Number(ch)) % 97;
  return `${country}${String(98 - rem).padStart(2, '0')}${bban}`;
}

interface Place {
  street: string;
  postal: string;
  city: string;
}

const PLACES: Record<Lang, Place[]> = {
  sk: [
    { street: 'Hlavná 12', postal: '811 01', city: 'Bratislava' },
    { street: 'Mlynská 7', postal: '040 01', city: 'Košice' },
    { street: 'Štúrova 45', postal: '949 01', city: 'Nitra' },
    { street: 'Námestie SNP 3', postal: '974 01', city: 'Banská Bystrica' },
    { street: 'Kukučínova 21', postal: '010 01', city: 'Žilina' },
  ],
  cs: [
    { street: 'Vinohradská 112', postal: '130 00', city: 'Praha 3' },
    { street: 'Masarykova 27', postal: '602 00', city: 'Brno' },
    { street: 'Nádražní 8', postal: '702 00', city: 'Ostrava' },
    { street: 'Husova 15', postal: '370 01', city: 'České Budějovice' },
    { street: 'Palackého 4', postal: '779 00', city: 'Olomouc' },
  ],
  de: [
    { street: 'Hauptstraße 15', postal: '10115', city: 'Berlin' },
    { street: 'Marienplatz 8', postal: '80331', city: 'München' },
    { street: 'Königsallee 60', postal: '40212', city: 'Düsseldorf' },
    { street: 'Schillerstraße 3', postal: '01069', city: 'Dresden' },
    { street: 'Lindenweg 22', postal: '50667', city: 'Köln' },
  ],
  en: [
    { street: '14 High Street', postal: 'SW1A 1AA', city: 'London' },
    { street: '7 Station Road', postal: 'M1 1AE', city: 'Manchester' },
    { street: '22 Queen Street', postal: 'EH2 1JX', city: 'Edinburgh' },
    { street: '3 Mill Lane', postal: 'BS1 4DJ', city: 'Bristol' },
    { street: '58 Church Road', postal: 'LS1 2AB', city: 'Leeds' },
  ],
};

const COMPANIES: Record<Lang, string[]> = {
  sk: ['Alfa Trade s.r.o.', 'Tatra Servis s.r.o.', 'Dunaj Consulting a.s.', 'Zelený Dom s.r.o.', 'Kancel Plus s.r.o.', 'Biela Hora a.s.'],
  cs: ['Vltava Systems s.r.o.', 'Moravská Stavební a.s.', 'Papírnictví Novák s.r.o.', 'Kovo Brno s.r.o.', 'Zelená Louka a.s.', 'Datová Síť s.r.o.'],
  de: ['Müller Bürobedarf GmbH', 'Schneider Technik GmbH', 'Becker & Söhne KG', 'Nordlicht Software AG', 'Weber Logistik GmbH', 'Grünwald Druck GmbH'],
  en: ['Harbour Supplies Ltd', 'Bluebell Consulting Ltd', 'Northern Print PLC', 'Greenfield Office Ltd', 'Redwood Analytics Ltd', 'Kingsway Traders Ltd'],
};

const SHOPS: Record<Lang, string[]> = {
  sk: ['Potraviny Jednota s.r.o.', 'Lekáreň Zdravie s.r.o.', 'Papiernictvo Pero s.r.o.'],
  cs: ['Potraviny U Nováků s.r.o.', 'Drogerie Lenka s.r.o.', 'Kavárna Mlýnek s.r.o.'],
  de: ['Bäckerei Schmidt GmbH', 'Getränkemarkt Krause GmbH', 'Buchhandlung Lesezeit GmbH'],
  en: ['Corner Café Ltd', 'City Stationers Ltd', 'Fresh Market Ltd'],
};

const SERVICES: Record<Lang, string[]> = {
  sk: ['Konzultačné služby', 'Licencia softvéru', 'Tonerová náplň', 'Kancelársky papier A4', 'Servis tlačiarne', 'Preprava tovaru', 'Školenie zamestnancov', 'Hosting na 12 mesiacov'],
  cs: ['Konzultační služby', 'Licence softwaru', 'Tonerová kazeta', 'Kancelářský papír A4', 'Servis tiskárny', 'Doprava zboží', 'Školení zaměstnanců', 'Webhosting na rok'],
  de: ['Beratungsleistung', 'Softwarelizenz', 'Tonerkartusche', 'Kopierpapier A4', 'Druckerwartung', 'Versandkosten', 'Mitarbeiterschulung', 'Webhosting Jahrespaket'],
  en: ['Consulting services', 'Software licence', 'Toner cartridge', 'Copy paper A4', 'Printer maintenance', 'Delivery charge', 'Staff training', 'Web hosting annual plan'],
};

const GOODS: Record<Lang, string[]> = {
  sk: ['Rohlík biely', 'Mlieko 1,5 %', 'Chlieb tmavý', 'Káva zrnková', 'Jablká', 'Minerálna voda', 'Pero modré', 'Zošit A5'],
  cs: ['Rohlík bílý', 'Mléko polotučné', 'Chléb kmínový', 'Káva zrnková', 'Jablka', 'Minerální voda', 'Propiska modrá', 'Sešit A5'],
  de: ['Brötchen', 'Vollmilch', 'Roggenbrot', 'Kaffee Bohnen', 'Äpfel', 'Mineralwasser', 'Kugelschreiber', 'Notizblock A5'],
  en: ['Croissant', 'Semi skimmed milk', 'Sourdough loaf', 'Coffee beans', 'Apples', 'Sparkling water', 'Blue ballpoint pen', 'A5 notebook'],
};

const RATES: Record<Lang, [string, string]> = { sk: ['23', '5'], cs: ['21', '12'], de: ['19', '7'], en: ['20', '5'] };
const CURRENCY: Record<Lang, string> = { sk: 'EUR', cs: 'CZK', de: 'EUR', en: 'GBP' };
const BICS: Record<Lang, string[]> = { sk: ['TATRSKBX', 'SUBASKBX', 'GIBASKBX'], cs: ['KOMBCZPP', 'GIBACZPX', 'CEKOCZPP'], de: ['COBADEFFXXX', 'DEUTDEFF', 'GENODEF1M04'], en: ['BARCGB22', 'NWBKGB2L', 'HBUKGB4B'] };
const COUNTRY: Record<Lang, string> = { sk: 'SK', cs: 'CZ', de: 'DE', en: 'GB' };

interface Party {
  name: string;
  place: Place;
  registration_id: string | null;
  tax_id: string | null;
  vat_id: string | null;
  iban: string;
}

function party(r: Rand, lang: Lang, names: string[]): Party {
  const place = r.pick(PLACES[lang]);
  const name = r.pick(names);
  switch (lang) {
    case 'sk': {
      const vatId = vat('SK', () => `20${r.digits(8)}`);
      return { name, place, registration_id: ico(r), tax_id: vatId.slice(2), vat_id: vatId, iban: iban('SK', `${r.pick(['1100', '0900', '0200'])}000000${r.digits(10)}`) };
    }
    case 'cs': {
      const id = ico(r);
      return { name, place, registration_id: id, tax_id: null, vat_id: `CZ${id}`, iban: iban('CZ', `${r.pick(['0100', '0800', '0300'])}000000${r.digits(10)}`) };
    }
    case 'de':
      return { name, place, registration_id: `HRB ${r.int(10000, 99999)}`, tax_id: `${r.int(10, 99)}/${r.int(100, 999)}/${r.digits(5)}`, vat_id: vat('DE', () => `${r.int(1, 9)}${r.digits(8)}`), iban: iban('DE', `${r.int(10000000, 99999999)}${r.digits(10)}`) };
    case 'en':
      return { name, place, registration_id: `${r.int(1, 9)}${r.digits(7)}`, tax_id: null, vat_id: vat('GB', () => `${r.int(1, 9)}${r.digits(8)}`), iban: iban('GB', `${r.pick(['BARC', 'NWBK', 'HBUK'])}${r.digits(14)}`) };
  }
}

function isoDate(r: Rand): string {
  const month = r.int(1, 12);
  const day = r.int(1, 28);
  return `${r.pick([2025, 2026])}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

function addDays(iso: string, days: number): string {
  const d = new Date(`${iso}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** What a widened document changes in its content (the first corpus's documents use none of it). */
export interface Variation {
  wording?: Wording;
  scenario?: Scenario;
  split?: Split;
  degradation?: Degradation;
  /** Line items [min, max] (multi-page documents need many). */
  items?: [number, number];
}

const LONG_SUFFIX: Record<Lang, string[]> = {
  sk: ['projekt migrácie databázy, etapa 2', 'podľa objednávky č. 2026/114 zo dňa 3. 2.', 'vrátane dopravy a inštalácie na mieste'],
  cs: ['projekt migrace databáze, etapa 2', 'dle objednávky č. 2026/114 ze dne 3. 2.', 'včetně dopravy a instalace na místě'],
  de: ['Projekt Datenbankmigration, Phase 2', 'gemäß Bestellung Nr. 2026/114 vom 3. 2.', 'inklusive Lieferung und Montage vor Ort'],
  en: ['database migration project, phase 2', 'as per purchase order 2026/114 of 3 Feb', 'including delivery and on-site installation'],
};

export function makeDocument(seed: number, index: number, lang: Lang, layout: Layout, variation: Variation = {}): CorpusDocument {
  const r = new Rand(rng(seed * 7919 + index));
  const receipt = isReceipt(layout);
  const scenario = variation.scenario ?? 'standard';
  const supplier = party(r, lang, receipt ? SHOPS[lang] : COMPANIES[lang]);
  const customer = party(r, lang, COMPANIES[lang].filter((n) => n !== supplier.name));
  const issue = isoDate(r);
  const [high, low] = RATES[lang];
  const count = variation.items ? r.int(...variation.items) : receipt ? r.int(2, 6) : r.int(1, 4);
  const names = [...(receipt ? GOODS[lang] : SERVICES[lang])];
  // More items than names (multi-page documents): the names again, numbered.
  for (let round = 2; names.length < count; round++) names.push(...(receipt ? GOODS[lang] : SERVICES[lang]).map((n) => `${n} ${round}`));
  const lengthen = scenario === 'long_items' ? new Rand(rng(seed * 6007 + index)) : null;
  const items: ExtractedFields['line_items'] = [];
  const itemRates: string[] = [];
  for (let i = 0; i < count; i++) {
    const short = names.splice(r.int(0, names.length - 1), 1)[0];
    const name = lengthen ? `${short} – ${lengthen.pick(LONG_SUFFIX[lang])}` : short;
    const quantity = receipt ? r.pick([1, 1, 2, 3, 4]) : r.pick([1, 1, 2, 3, 5, 10]);
    const scale = CURRENCY[lang] === 'CZK' ? 25 : 1;
    const unit = new Decimal(receipt ? r.int(15, 900) : r.int(900, 60000)).div(100).times(scale).toDecimalPlaces(2);
    const total = unit.times(quantity);
    items.push({ name, quantity: String(quantity), unit_price: unit.toFixed(2), total: total.toFixed(2) });
    itemRates.push(r.next() < 0.3 ? low : high);
  }
  const byRate = new Map<string, Decimal>();
  items.forEach((it, i) => byRate.set(itemRates[i], (byRate.get(itemRates[i]) ?? new Decimal(0)).plus(it.total!)));
  const vat_breakdown = [...byRate.entries()]
    .sort((a, b) => Number(b[0]) - Number(a[0]))
    .map(([rate, amount]) => {
      if (receipt) {
        // Receipts print gross prices: the VAT is contained in them.
        const v = amount.times(rate).div(new Decimal(100).plus(rate)).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
        return { rate, base: amount.minus(v).toFixed(2), vat: v.toFixed(2) };
      }
      return { rate, base: amount.toFixed(2), vat: amount.times(rate).div(100).toDecimalPlaces(2, Decimal.ROUND_HALF_UP).toFixed(2) };
    });
  const subtotal = vat_breakdown.reduce((s, v) => s.plus(v.base), new Decimal(0));
  const vatTotal = vat_breakdown.reduce((s, v) => s.plus(v.vat), new Decimal(0));
  const number = receipt ? `${r.int(1, 9)}${r.digits(5)}` : lang === 'de' ? `RE-${issue.slice(0, 4)}-${r.int(100, 999)}` : lang === 'en' ? `INV-${r.int(1000, 9999)}` : `${issue.slice(0, 4)}${r.digits(4)}`;
  const fields: ExtractedFields = {
    supplier: {
      name: supplier.name,
      registration_id: supplier.registration_id,
      tax_id: supplier.tax_id,
      vat_id: supplier.vat_id,
      address: { street: supplier.place.street, municipality: supplier.place.city, postal_code: supplier.place.postal, country_alpha2: COUNTRY[lang] },
    },
    document_number: number,
    issue_date: issue,
    due_date: receipt ? null : addDays(issue, r.pick([7, 14, 14, 30])),
    currency: CURRENCY[lang],
    subtotal: subtotal.toFixed(2),
    vat_total: vatTotal.toFixed(2),
    total: subtotal.plus(vatTotal).toFixed(2),
    vat_breakdown,
    iban: receipt ? null : supplier.iban,
    bic: receipt ? null : r.pick(BICS[lang]),
    variable_symbol: !receipt && (lang === 'sk' || lang === 'cs') ? number.replace(/\D/g, '') : null,
    line_items: items,
  };
  if (scenario === 'card_paid') {
    // Paid by card: no bank details printed (drawn above all the same, so the rest of the document is unchanged).
    fields.iban = null;
    fields.bic = null;
    fields.variable_symbol = null;
  }
  const wide = variation.split !== undefined;
  return {
    id: wide ? `${String(index).padStart(3, '0')}-${lang}-${layout}-${variation.wording ?? 'canonical'}-${scenario}` : `${String(index).padStart(3, '0')}-${lang}-${layout}`,
    lang,
    layout,
    wording: variation.wording ?? 'canonical',
    scenario,
    split: variation.split ?? 'tuned',
    degradation: variation.degradation ?? 'mild',
    fields,
    customer: { name: customer.name, street: customer.place.street, postal: customer.place.postal, city: customer.place.city, registration_id: customer.registration_id, tax_id: customer.tax_id, vat_id: customer.vat_id, iban: customer.iban },
    taxPointDate: issue,
    itemRates,
    receiptTime: `${String(r.int(7, 20)).padStart(2, '0')}:${String(r.int(0, 59)).padStart(2, '0')}`,
  };
}

/** The documents of a corpus: languages and layouts in turn. */
export function corpusDocuments(seed: number, count: number): CorpusDocument[] {
  const langs: Lang[] = ['sk', 'cs', 'en', 'de'];
  const layouts: Layout[] = ['classic', 'receipt', 'letterhead'];
  return Array.from({ length: count }, (_, i) => makeDocument(seed, i, langs[i % 4], layouts[Math.floor(i / 4) % 3]));
}
