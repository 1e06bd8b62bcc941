// The EN 16931 semantic model of an issued invoice or credit note (docs/e-invoicing.md "Mapping"): built
// from the document as issued (its supplier snapshot, purchaser, lines, totals, bank account), with the VAT
// category of every rate derived from the rate and the parties' VAT status. Pure, and exact: every amount
// is the document's own decimal string or a decimal.js sum of them (never binary floating point), so the
// totals are the ones the validator recomputes (BR-CO-10…17). Missing data the rules require is collected,
// not thrown one by one: the caller gets every { rule, field, message } at once (422 einvoice_incomplete).
import { DomainError } from '../../../shared/errors';
import { Decimal, formatMoney, minorUnits, roundMoney, sum } from '../../../shared/money';
import { PrintableDocument, PrintedParty } from '../../ports/document-source';

/** UNCL 5305 VAT category codes used here: standard, zero, exempt, intra-EU reverse charge, export, not subject. */
export type VatCategory = 'S' | 'Z' | 'E' | 'AE' | 'G' | 'O';

export interface EAddress {
  street: string;
  city: string;
  postalCode: string;
  /** ISO 3166-1 alpha-2, upper case (the code lists' form). */
  country: string;
}

export interface EParty {
  name: string;
  /** BT-30 / BT-47 legal registration identifier (IČO, Handelsregister number). */
  registrationId: string | null;
  /** BT-31 / BT-48 VAT identifier. */
  vatId: string | null;
  /** BT-32 seller tax registration identifier, when it is not the VAT identifier (German Steuernummer). */
  taxId: string | null;
  email: string | null;
  phone: string | null;
  address: EAddress;
}

export interface ELine {
  id: string;
  name: string;
  description: string | null;
  /** BT-129: negative for a deduction, whose price (BT-146) stays positive (BR-27). */
  quantity: string;
  /** BT-130, UN/ECE Recommendation 20. */
  unitCode: string;
  /** BT-146 item net price, ≥ 0. */
  price: string;
  /** BT-131 line net amount: the document's own net_amount. */
  net: string;
  /** The line's discount as a line allowance (BT-136…BT-140), null without one. */
  allowance: { amount: string; base: string; percent: string } | null;
  category: VatCategory;
  /** BT-152; null for category O (BR-O-5). */
  rate: string | null;
}

export interface EVatRow {
  category: VatCategory;
  rate: string | null;
  /** BT-116 and BT-117: the document's vat_breakdown row. */
  base: string;
  vat: string;
  /** BT-121 / BT-120: required for E, AE, G, O (BR-E-10, BR-AE-10, BR-G-10, BR-O-10). */
  exemptionCode: string | null;
  exemptionReason: string | null;
}

export interface EPayment {
  /** UNCL 4461: 58 SEPA credit transfer (IBAN), 30 credit transfer (a domestic account number). */
  meansCode: '58' | '30';
  /** BT-84 */
  account: string;
  /** BT-85 */
  accountName: string | null;
  /** BT-86 */
  bic: string | null;
  /** BT-83 remittance information: the variable symbol (CZ, SK). */
  paymentId: string | null;
}

export interface EInvoice {
  kind: 'invoice' | 'credit_note';
  /** BT-1 */
  number: string;
  issueDate: string;
  /** BT-9 (invoices). */
  dueDate: string | null;
  /** BT-72 */
  deliveryDate: string | null;
  currency: string;
  /** BT-6 VAT accounting currency and BT-111 the VAT total in it (a foreign-currency document), else null. */
  taxCurrency: { code: string; vat: string } | null;
  /** BT-22 */
  note: string | null;
  /** BT-20: a credit note's terms (it has no due date). */
  paymentTerms: string | null;
  /** BT-25: a credit note's invoice. */
  precedingInvoice: string | null;
  /** BT-10 buyer reference, BT-13 purchase order reference, BT-12 contract reference (invoices). */
  buyerReference: string | null;
  orderReference: string | null;
  contractReference: string | null;
  seller: EParty;
  buyer: EParty;
  lines: ELine[];
  vat: EVatRow[];
  totals: {
    /** BT-106 = Σ BT-131 */
    lineNet: string;
    /** BT-109 */
    taxExclusive: string;
    /** BT-110 */
    vat: string;
    /** BT-112 */
    taxInclusive: string;
    /** BT-113: the whole total once the invoice is paid. */
    prepaid: string;
    /** BT-115 */
    payable: string;
  };
  payment: EPayment | null;
}

export interface MissingRule {
  /** The EN 16931 business rule that requires the data. */
  rule: string;
  /** The field as the API names it (on the document, or where it comes from). */
  field: string;
  message: string;
}

/** 422 einvoice_incomplete: error.details lists every missing rule (gateway/http/errors.ts). */
export function incomplete(missing: MissingRule[]): DomainError {
  return new DomainError(
    'invalid_argument',
    'einvoice_incomplete',
    `the document lacks data the e-invoice rules require: ${missing.map((m) => `${m.rule} (${m.field})`).join(', ')}`,
    missing[0]?.field,
    { details: JSON.stringify(missing) },
  );
}

/** EU member states (ISO 3166-1; Greece's VAT prefix EL is not a country code). */
const EU = new Set(['AT', 'BE', 'BG', 'CY', 'CZ', 'DE', 'DK', 'EE', 'ES', 'FI', 'FR', 'GR', 'HR', 'HU', 'IE', 'IT', 'LT', 'LU', 'LV', 'MT', 'NL', 'PL', 'PT', 'RO', 'SE', 'SI', 'SK']);

/** Countries whose payment reference is the variable symbol (BT-83). */
const VARIABLE_SYMBOL_COUNTRIES = new Set(['CZ', 'SK']);

/** Units as typed on lines (lower case, without a trailing dot) → UN/ECE Rec. 20; anything else is C62 "one". */
const UNIT_CODES: Record<string, string> = {
  ks: 'H87', kus: 'H87', pcs: 'H87', pc: 'H87', piece: 'H87', pieces: 'H87', stk: 'H87', 'stück': 'H87', st: 'H87',
  h: 'HUR', hod: 'HUR', hodina: 'HUR', hodiny: 'HUR', hour: 'HUR', hours: 'HUR', hrs: 'HUR', std: 'HUR', stunde: 'HUR', stunden: 'HUR',
  d: 'DAY', day: 'DAY', days: 'DAY', den: 'DAY', dny: 'DAY', 'dní': 'DAY', tag: 'DAY', tage: 'DAY', md: 'DAY',
  month: 'MON', months: 'MON', 'měsíc': 'MON', mesiac: 'MON', monat: 'MON', 'měs': 'MON', mes: 'MON',
  kg: 'KGM', g: 'GRM', t: 'TNE', m: 'MTR', km: 'KMT', m2: 'MTK', 'm²': 'MTK', m3: 'MTQ', 'm³': 'MTQ', l: 'LTR', kwh: 'KWH',
};

export function unitCode(unit: string): string {
  return UNIT_CODES[unit.trim().toLowerCase().replace(/\.$/, '')] ?? 'C62';
}

/** The exemption reason of each category that needs one (VATEX codes of the CEF code list). */
const EXEMPTION: Partial<Record<VatCategory, { code: string; reason: string }>> = {
  AE: { code: 'VATEX-EU-AE', reason: 'Reverse charge' },
  G: { code: 'VATEX-EU-G', reason: 'Export outside the EU' },
  E: { code: '', reason: 'Exempt from VAT' },
  O: { code: 'VATEX-EU-O', reason: 'Not subject to VAT' },
};

/**
 * The VAT category of a rate (docs/e-invoicing.md "VAT categories"): a positive rate is standard (S). A 0 %
 * rate is: not subject (O) when the supplier has no VAT identifier (not a VAT payer); else reverse charge
 * (AE) to a purchaser with a VAT identifier in another EU state; export (G) to a purchaser outside the EU;
 * else exempt (E). Zero-rated (Z) is not derived: a 0 % rate alone cannot tell it from exempt.
 */
export function vatCategory(rate: string, supplier: EParty, purchaser: EParty): VatCategory {
  if (!new Decimal(rate).isZero()) return 'S';
  if (!supplier.vatId) return 'O';
  const buyerCountry = purchaser.address.country;
  if (buyerCountry && buyerCountry !== supplier.address.country && EU.has(buyerCountry) && purchaser.vatId) return 'AE';
  if (buyerCountry && !EU.has(buyerCountry)) return 'G';
  return 'E';
}

const blank = (s: string | null | undefined): s is null | undefined | '' => !s || !s.trim();
const orNull = (s: string | null | undefined) => (blank(s) ? null : s.trim());

function party(p: PrintedParty | null): EParty {
  const a = p?.address ?? null;
  return {
    name: p?.name.trim() ?? '',
    registrationId: orNull(p?.registration_id),
    vatId: orNull(p?.vat_id)?.replace(/\s+/g, '') ?? null,
    taxId: orNull(p?.tax_id),
    email: orNull(p?.email),
    phone: orNull(p?.phone),
    address: {
      street: a?.street.trim() ?? '',
      city: a?.municipality.trim() ?? '',
      postalCode: a?.postal_code.trim() ?? '',
      country: (a?.country_alpha2 ?? '').trim().toUpperCase(),
    },
  };
}

function requireParty(p: EParty, prefix: 'supplier' | 'purchaser', missing: MissingRule[]) {
  const [nameRule, addressRule, countryRule] = prefix === 'supplier' ? ['BR-6', 'BR-8', 'BR-9'] : ['BR-7', 'BR-10', 'BR-11'];
  const who = prefix === 'supplier' ? 'seller' : 'buyer';
  if (!p.name) missing.push({ rule: nameRule, field: `${prefix}.name`, message: `the ${who}'s name is required` });
  if (!p.address.country) {
    missing.push({ rule: countryRule, field: `${prefix}.address.country_alpha2`, message: `the ${who}'s postal address with its country is required (${addressRule})` });
  }
}

function payment(doc: PrintableDocument, seller: EParty): EPayment | null {
  const bank = doc.bank_account;
  if (!bank) return null;
  const paymentId = VARIABLE_SYMBOL_COUNTRIES.has(seller.address.country) ? orNull(doc.variable_symbol) : null;
  const iban = bank.iban.replace(/\s+/g, '').toUpperCase();
  const common = { accountName: orNull(bank.name), bic: orNull(bank.swift)?.toUpperCase() ?? null, paymentId };
  if (iban) return { meansCode: '58', account: iban, ...common };
  const account = bank.bank_code ? `${bank.account_number}/${bank.bank_code}` : bank.account_number;
  return { meansCode: '30', account, ...common };
}

/**
 * BT-6 / BT-111: a document in another currency than the workspace's states its VAT in the workspace
 * currency too (CZ and SK law require it): the VAT total × exchange_rate, rounded once (BR-53 needs both).
 */
function taxCurrency(doc: PrintableDocument): EInvoice['taxCurrency'] {
  const code = doc.accounting_currency;
  if (!code || code === doc.currency || !doc.exchange_rate || minorUnits(code) > 2) return null;
  return { code, vat: formatMoney(new Decimal(doc.vat_total).times(doc.exchange_rate), code) };
}

/** A line as EN 16931 wants it: a deduction's sign on its quantity, its discount as a line allowance. */
function line(l: PrintableDocument['line_items'][number], index: number, currency: string, category: VatCategory): ELine {
  const price = new Decimal(l.unit_price);
  const quantity = new Decimal(l.quantity);
  const discount = new Decimal(l.discount || '0');
  const signedQuantity = price.isNegative() ? quantity.negated() : quantity;
  // Before the discount, rounded as the net is (EN 16931 amounts have the currency's decimals).
  const gross = roundMoney(quantity.times(price), currency);
  const allowance = discount.isZero() || price.isNegative()
    ? null
    : { amount: formatMoney(gross.minus(l.net_amount), currency), base: formatMoney(gross, currency), percent: discount.toFixed() };
  return {
    id: String(index + 1),
    name: l.name,
    description: orNull(l.description),
    quantity: signedQuantity.toFixed(),
    unitCode: unitCode(l.unit),
    price: price.abs().toFixed(Math.max(minorUnits(currency), price.decimalPlaces())),
    net: l.net_amount,
    allowance,
    category,
    rate: category === 'O' ? null : new Decimal(l.vat_rate).toFixed(),
  };
}

/** Builds the model, or throws 422 einvoice_incomplete with every missing rule. */
export function einvoiceModel(doc: PrintableDocument, supplier: PrintedParty): EInvoice {
  if (doc.type !== 'invoice' && doc.type !== 'credit_note') throw new Error(`no e-invoice for a ${doc.type}`);
  const missing: MissingRule[] = [];
  const seller = party(supplier);
  const buyer = party(doc.purchaser);
  requireParty(seller, 'supplier', missing);
  if (!doc.purchaser) missing.push({ rule: 'BR-7', field: 'purchaser_id', message: 'an e-invoice needs a purchaser (the buyer)' });
  else requireParty(buyer, 'purchaser', missing);
  if (!seller.registrationId && !seller.vatId) {
    missing.push({ rule: 'BR-CO-26', field: 'supplier.registration_id', message: "the seller's registration or VAT identifier is required" });
  }
  if (minorUnits(doc.currency) > 2) {
    missing.push({ rule: 'BR-DEC-23', field: 'currency', message: `amounts of ${doc.currency} have more than the 2 decimals EN 16931 allows` });
  }

  const categoryOf = new Map(doc.vat_breakdown.map((r) => [new Decimal(r.vat_rate).toFixed(), vatCategory(r.vat_rate, seller, buyer)]));
  const categories = new Set(categoryOf.values());
  if (categories.has('S') && !seller.vatId) {
    missing.push({ rule: 'BR-S-2', field: 'supplier.vat_id', message: 'a document with VAT charged needs the seller VAT identifier' });
  }
  if (categories.has('O')) {
    // BR-O-2: "not subject" carries no buyer VAT identifier.
    buyer.vatId = null;
  }
  const isInvoice = doc.type === 'invoice';
  if (isInvoice && !doc.due_date) missing.push({ rule: 'BR-CO-25', field: 'due_date', message: 'an amount due needs a payment due date' });
  if (missing.length) throw incomplete(missing);

  const lines = doc.line_items.map((l, i) => line(l, i, doc.currency, categoryOf.get(new Decimal(l.vat_rate).toFixed())!));
  const vat = doc.vat_breakdown.map((r): EVatRow => {
    const category = categoryOf.get(new Decimal(r.vat_rate).toFixed())!;
    const exemption = EXEMPTION[category];
    return {
      category,
      rate: category === 'O' ? null : new Decimal(r.vat_rate).toFixed(),
      base: r.base,
      vat: r.vat,
      exemptionCode: exemption?.code || null,
      exemptionReason: exemption?.reason ?? null,
    };
  });
  const paid = isInvoice && (doc.status === 'paid' || doc.paid_on !== null);
  const total = new Decimal(doc.total);
  const money = (d: Decimal) => formatMoney(d, doc.currency);
  return {
    kind: doc.type,
    number: doc.number ?? String(doc.id),
    issueDate: doc.issue_date,
    dueDate: isInvoice ? doc.due_date : null,
    deliveryDate: doc.delivery_date,
    currency: doc.currency,
    taxCurrency: taxCurrency(doc),
    note: orNull(doc.note),
    paymentTerms: isInvoice ? null : doc.invoice_number ? `Credited against invoice ${doc.invoice_number}` : 'Refunded or credited on request',
    precedingInvoice: isInvoice ? null : doc.invoice_number,
    buyerReference: orNull(doc.buyer_reference),
    orderReference: orNull(doc.order_reference),
    contractReference: orNull(doc.contract_reference),
    seller,
    buyer,
    lines,
    vat,
    totals: {
      lineNet: money(sum(doc.line_items.map((l) => new Decimal(l.net_amount)))),
      taxExclusive: doc.subtotal,
      vat: doc.vat_total,
      taxInclusive: doc.total,
      prepaid: money(paid ? total : new Decimal(0)),
      payable: money(paid ? new Decimal(0) : total),
    },
    payment: isInvoice ? payment(doc, seller) : null,
  };
}
