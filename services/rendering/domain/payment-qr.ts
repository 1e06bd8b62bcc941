// Which payment QR code a document carries, and its payload — encoded by the libraries of each
// standard, never by hand: PAY by square (Slovak suppliers), SPAYD / QR Platba (CZK), EPC/SEPA (EUR).
import { encode as encodePayBySquare, PaymentOptions } from 'bysquare/pay';
import Decimal from 'decimal.js';
import epcPayload from 'sepa-payment-qr-code';
import spayd from 'spayd';
import { PrintableDocument } from '../ports/document-source';

export type QrScheme = 'pay_by_square' | 'spayd' | 'epc';

export interface PaymentQr {
  scheme: QrScheme;
  payload: string;
}

/** Variable symbols are up to 10 digits in both Czech and Slovak banking. */
const VARIABLE_SYMBOL = /^\d{1,10}$/;

/** Payable documents: an unpaid invoice or a proforma with something due to an IBAN. */
function payable(doc: PrintableDocument): boolean {
  if (doc.type !== 'invoice' && doc.type !== 'proforma') return false;
  if (doc.status === 'paid' || doc.status === 'converted') return false;
  return !!doc.bank_account?.iban && new Decimal(doc.amount_due || '0').gt(0);
}

/** The libraries check presence with `in` / own keys: optional fields are left out, not undefined. */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== '')) as T;
}

/**
 * The QR scheme by supplier country first (Slovak banks read PAY by square in any currency), then by
 * currency; none for other currencies. The amount is the amount due (credits already applied).
 * A payload a library refuses (a malformed IBAN of an old bank account) prints no QR code rather than
 * failing the PDF.
 */
export function paymentQr(doc: PrintableDocument): PaymentQr | null {
  if (!payable(doc)) return null;
  try {
    return encodeQr(doc);
  } catch {
    return null;
  }
}

function encodeQr(doc: PrintableDocument): PaymentQr | null {
  const iban = doc.bank_account!.iban.replace(/\s+/g, '').toUpperCase();
  const bic = doc.bank_account!.swift || undefined;
  const amount = new Decimal(doc.amount_due).toFixed(2);
  const vs = doc.variable_symbol && VARIABLE_SYMBOL.test(doc.variable_symbol) ? doc.variable_symbol : undefined;
  const reference = [doc.number, vs ? `VS ${vs}` : ''].filter(Boolean).join(' ');
  const supplierCountry = doc.supplier.address?.country_alpha2?.toLowerCase();
  if (supplierCountry === 'sk') {
    return {
      scheme: 'pay_by_square',
      payload: encodePayBySquare({
        payments: [
          defined({
            type: PaymentOptions.PaymentOrder,
            // The library's model is a JS number; two decimals survive the round trip exactly.
            amount: Number(amount),
            currencyCode: doc.currency,
            variableSymbol: vs,
            paymentDueDate: doc.due_date ? doc.due_date.replace(/-/g, '') : undefined,
            paymentNote: doc.number ?? undefined,
            bankAccounts: [defined({ iban, bic })],
            beneficiary: { name: doc.supplier.name.slice(0, 70) },
          }),
        ],
      }),
    };
  }
  if (doc.currency === 'CZK') {
    return {
      scheme: 'spayd',
      payload: spayd(defined({ acc: bic ? `${iban}+${bic}` : iban, am: amount, cc: 'CZK', xvs: vs, msg: doc.number ?? undefined, rn: doc.supplier.name.slice(0, 35) })),
    };
  }
  if (doc.currency === 'EUR') {
    return {
      scheme: 'epc',
      payload: epcPayload(
        defined({
          name: doc.supplier.name.slice(0, 70),
          iban,
          bic,
          amount: Number(amount),
          unstructuredReference: reference || undefined,
        }),
      ),
    };
  }
  return null;
}
