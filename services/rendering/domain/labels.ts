// Printed words per pdf_language. Every language has every label (a missing one is a type error).
import { DocKind } from '../ports/document-source';

export const LANGUAGES = ['en', 'cs', 'sk', 'de'] as const;
export type Language = (typeof LANGUAGES)[number];

/** The Intl locale whose number, currency and date formats a language prints with. */
export const INTL_LOCALE: Record<Language, string> = { en: 'en-GB', cs: 'cs-CZ', sk: 'sk-SK', de: 'de-DE' };

export interface Labels {
  title: Record<DocKind, string>;
  supplier: string;
  purchaser: string;
  registration_id: string;
  tax_id: string;
  vat_id: string;
  number: string;
  issue_date: string;
  due_date: string;
  delivery_date: string;
  corrects_invoice: string;
  item: string;
  quantity: string;
  unit_price: string;
  vat_rate: string;
  discount: string;
  net_amount: string;
  vat_breakdown: string;
  vat_base: string;
  vat: string;
  subtotal: string;
  vat_total: string;
  total: string;
  credits_applied: string;
  amount_due: string;
  payment: string;
  bank: string;
  iban: string;
  account_number: string;
  swift: string;
  variable_symbol: string;
  pay_by_qr: string;
  note: string;
  draft: string;
  paid: string;
  paid_on: string;
}

export const LABELS: Record<Language, Labels> = {
  en: {
    title: { invoice: 'Invoice', credit_note: 'Credit note', proforma: 'Proforma invoice', quote: 'Quote' },
    supplier: 'Supplier',
    purchaser: 'Purchaser',
    registration_id: 'Reg. ID',
    tax_id: 'Tax ID',
    vat_id: 'VAT ID',
    number: 'Number',
    issue_date: 'Issue date',
    due_date: 'Due date',
    delivery_date: 'Delivery date',
    corrects_invoice: 'Corrects invoice',
    item: 'Item',
    quantity: 'Qty',
    unit_price: 'Unit price',
    vat_rate: 'VAT %',
    discount: 'Discount %',
    net_amount: 'Amount',
    vat_breakdown: 'VAT breakdown',
    vat_base: 'Base',
    vat: 'VAT',
    subtotal: 'Subtotal',
    vat_total: 'VAT total',
    total: 'Total',
    credits_applied: 'Credits applied',
    amount_due: 'Amount due',
    payment: 'Payment details',
    bank: 'Bank',
    iban: 'IBAN',
    account_number: 'Account number',
    swift: 'SWIFT/BIC',
    variable_symbol: 'Variable symbol',
    pay_by_qr: 'Scan to pay',
    note: 'Note',
    draft: 'DRAFT',
    paid: 'PAID',
    paid_on: 'Paid on',
  },
  cs: {
    title: { invoice: 'Faktura', credit_note: 'Opravný daňový doklad', proforma: 'Zálohová faktura', quote: 'Cenová nabídka' },
    supplier: 'Dodavatel',
    purchaser: 'Odběratel',
    registration_id: 'IČO',
    tax_id: 'Daňové číslo',
    vat_id: 'DIČ',
    number: 'Číslo',
    issue_date: 'Datum vystavení',
    due_date: 'Datum splatnosti',
    delivery_date: 'Datum zdanitelného plnění',
    corrects_invoice: 'Opravuje fakturu',
    item: 'Položka',
    quantity: 'Množství',
    unit_price: 'Cena za jednotku',
    vat_rate: 'DPH %',
    discount: 'Sleva %',
    net_amount: 'Částka',
    vat_breakdown: 'Rekapitulace DPH',
    vat_base: 'Základ',
    vat: 'DPH',
    subtotal: 'Celkem bez DPH',
    vat_total: 'DPH celkem',
    total: 'Celkem',
    credits_applied: 'Započtené dobropisy',
    amount_due: 'K úhradě',
    payment: 'Platební údaje',
    bank: 'Banka',
    iban: 'IBAN',
    account_number: 'Číslo účtu',
    swift: 'SWIFT/BIC',
    variable_symbol: 'Variabilní symbol',
    pay_by_qr: 'Zaplaťte QR kódem',
    note: 'Poznámka',
    draft: 'KONCEPT',
    paid: 'ZAPLACENO',
    paid_on: 'Zaplaceno dne',
  },
  sk: {
    title: { invoice: 'Faktúra', credit_note: 'Dobropis', proforma: 'Zálohová faktúra', quote: 'Cenová ponuka' },
    supplier: 'Dodávateľ',
    purchaser: 'Odberateľ',
    registration_id: 'IČO',
    tax_id: 'DIČ',
    vat_id: 'IČ DPH',
    number: 'Číslo',
    issue_date: 'Dátum vystavenia',
    due_date: 'Dátum splatnosti',
    delivery_date: 'Dátum dodania',
    corrects_invoice: 'Opravuje faktúru',
    item: 'Položka',
    quantity: 'Množstvo',
    unit_price: 'Jednotková cena',
    vat_rate: 'DPH %',
    discount: 'Zľava %',
    net_amount: 'Suma',
    vat_breakdown: 'Rekapitulácia DPH',
    vat_base: 'Základ',
    vat: 'DPH',
    subtotal: 'Spolu bez DPH',
    vat_total: 'DPH spolu',
    total: 'Spolu',
    credits_applied: 'Započítané dobropisy',
    amount_due: 'K úhrade',
    payment: 'Platobné údaje',
    bank: 'Banka',
    iban: 'IBAN',
    account_number: 'Číslo účtu',
    swift: 'SWIFT/BIC',
    variable_symbol: 'Variabilný symbol',
    pay_by_qr: 'Zaplaťte QR kódom',
    note: 'Poznámka',
    draft: 'KONCEPT',
    paid: 'ZAPLATENÉ',
    paid_on: 'Zaplatené dňa',
  },
  de: {
    title: { invoice: 'Rechnung', credit_note: 'Gutschrift', proforma: 'Proformarechnung', quote: 'Angebot' },
    supplier: 'Lieferant',
    purchaser: 'Kunde',
    registration_id: 'Handelsregister-Nr.',
    tax_id: 'Steuernummer',
    vat_id: 'USt-IdNr.',
    number: 'Nummer',
    issue_date: 'Rechnungsdatum',
    due_date: 'Fälligkeitsdatum',
    delivery_date: 'Leistungsdatum',
    corrects_invoice: 'Korrigiert Rechnung',
    item: 'Position',
    quantity: 'Menge',
    unit_price: 'Einzelpreis',
    vat_rate: 'USt. %',
    discount: 'Rabatt %',
    net_amount: 'Betrag',
    vat_breakdown: 'Umsatzsteuer nach Sätzen',
    vat_base: 'Netto',
    vat: 'USt.',
    subtotal: 'Zwischensumme',
    vat_total: 'Umsatzsteuer gesamt',
    total: 'Gesamtbetrag',
    credits_applied: 'Verrechnete Gutschriften',
    amount_due: 'Zahlbetrag',
    payment: 'Zahlungsinformationen',
    bank: 'Bank',
    iban: 'IBAN',
    account_number: 'Kontonummer',
    swift: 'SWIFT/BIC',
    variable_symbol: 'Verwendungszweck',
    pay_by_qr: 'Mit QR-Code bezahlen',
    note: 'Hinweis',
    draft: 'ENTWURF',
    paid: 'BEZAHLT',
    paid_on: 'Bezahlt am',
  },
};

export function languageOf(pdfLanguage: string): Language {
  return (LANGUAGES as readonly string[]).includes(pdfLanguage) ? (pdfLanguage as Language) : 'en';
}
