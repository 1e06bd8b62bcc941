// Type declarations for payment-QR libraries: sepa-payment-qr-code ships none, and bysquare's `./pay`
// subpath export is invisible to the repository's node10 module resolution (the runtime resolves it).
declare module 'sepa-payment-qr-code' {
  interface EpcTransfer {
    name: string;
    iban: string;
    bic?: string;
    /** Euros; the library prints it with toFixed(2). null: no amount. */
    amount: number | null;
    purposeCode?: string;
    structuredReference?: string;
    unstructuredReference?: string;
    information?: string;
  }
  /** The EPC069-12 ("BCD") payload of a SEPA credit transfer. */
  function generateQrCode(data: EpcTransfer): string;
  export = generateQrCode;
}

declare module 'bysquare/pay' {
  export * from 'bysquare/lib/pay/index';
}
