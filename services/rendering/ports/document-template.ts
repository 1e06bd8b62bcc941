// The printed layout: a view model (every string already localised and formatted) in, one
// self-contained HTML page out. `version` changes whenever the layout does; it is part of every ETag,
// so a new template never serves a PDF of the old one.

export interface LabelledValue {
  label: string;
  value: string;
}

export interface PartyView {
  heading: string;
  name: string;
  address_lines: string[];
  ids: LabelledValue[];
  contact: string[];
}

export interface LineView {
  name: string;
  description: string;
  quantity: string;
  unit: string;
  unit_price: string;
  vat_rate: string;
  discount: string;
  net_amount: string;
}

export interface PdfView {
  /** BCP 47 language of the page (`<html lang>`). */
  lang: string;
  title: string;
  number: string;
  /** Big diagonal stamp: DRAFT on drafts, PAID on paid invoices (localised). */
  stamp: string | null;
  supplier: PartyView;
  purchaser: PartyView | null;
  dates: LabelledValue[];
  headings: { item: string; quantity: string; unit_price: string; vat_rate: string; discount: string; net_amount: string };
  lines: LineView[];
  vat_heading: { title: string; rate: string; base: string; vat: string };
  vat_breakdown: Array<{ rate: string; base: string; vat: string }>;
  totals: Array<LabelledValue & { emphasis: boolean }>;
  payment: { heading: string; rows: LabelledValue[] } | null;
  qr: { caption: string; image_data_uri: string } | null;
  logo_data_uri: string | null;
  note: { heading: string; text: string } | null;
}

export interface DocumentTemplate {
  readonly version: string;
  html(view: PdfView): string;
}
