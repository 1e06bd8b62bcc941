// The optional remote reader of the escalated tier: any server speaking the OpenAI chat-completions API
// with structured outputs (response_format json_schema). Off unless EXTRACTION_PROVIDER_URL is set. It
// only sees the document's text (never the file), and its answer passes the same checks as ours:
// an IBAN or VAT id failing its checksum, a date that is no date, money that is no decimal is dropped.
import { ExtractedFields, ExtractionFailure } from '../ports/extractor';
import { isValidBic, isValidIban, isValidIco, isValidVatId } from '../domain/extraction/checks';
import { ParsedFields } from '../domain/extraction/fields';
import { abortable } from './limits';

export interface ProviderOptions {
  /** Base URL ending before `/chat/completions`, e.g. https://api.openai.com/v1 or a local server. */
  url: string;
  model: string;
  apiKey?: string;
  timeoutMs?: number;
}

const str = { type: ['string', 'null'] };
const money = { type: ['string', 'null'], description: 'decimal with a dot, e.g. "1234.50"' };
export const FIELDS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['supplier', 'document_number', 'issue_date', 'due_date', 'currency', 'subtotal', 'vat_total', 'total', 'vat_breakdown', 'iban', 'bic', 'variable_symbol', 'line_items'],
  properties: {
    supplier: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'registration_id', 'tax_id', 'vat_id', 'address'],
      properties: {
        name: str,
        registration_id: str,
        tax_id: str,
        vat_id: str,
        address: { type: 'object', additionalProperties: false, required: ['street', 'municipality', 'postal_code', 'country_alpha2'], properties: { street: str, municipality: str, postal_code: str, country_alpha2: str } },
      },
    },
    document_number: str,
    issue_date: { type: ['string', 'null'], description: 'YYYY-MM-DD' },
    due_date: { type: ['string', 'null'], description: 'YYYY-MM-DD' },
    currency: { type: ['string', 'null'], description: 'ISO 4217' },
    subtotal: money,
    vat_total: money,
    total: money,
    vat_breakdown: { type: 'array', items: { type: 'object', additionalProperties: false, required: ['rate', 'base', 'vat'], properties: { rate: { type: 'string' }, base: { type: 'string' }, vat: { type: 'string' } } } },
    iban: str,
    bic: str,
    variable_symbol: str,
    line_items: { type: 'array', items: { type: 'object', additionalProperties: false, required: ['name', 'quantity', 'unit_price', 'total'], properties: { name: { type: 'string' }, quantity: money, unit_price: money, total: money } } },
  },
} as const;

const PROMPT =
  'You read invoices and receipts (Slovak, Czech, English, German). From the document text, return the SUPPLIER (seller) fields, ' +
  'never the customer. Money as decimal strings with a dot and two decimals, dates as YYYY-MM-DD, null when absent. Do not guess.';

export async function askProvider(options: ProviderOptions, text: string, signal: AbortSignal): Promise<ParsedFields> {
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => controller.abort(), options.timeoutMs ?? 60_000);
  try {
    const response = await abortable(
      fetch(`${options.url.replace(/\/$/, '')}/chat/completions`, {
        method: 'POST',
        signal: controller.signal,
        headers: { 'content-type': 'application/json', ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
        body: JSON.stringify({
          model: options.model,
          temperature: 0,
          messages: [
            { role: 'system', content: PROMPT },
            { role: 'user', content: text.slice(0, 20_000) },
          ],
          response_format: { type: 'json_schema', json_schema: { name: 'expense_fields', strict: true, schema: FIELDS_SCHEMA } },
        }),
      }),
      signal,
    );
    if (!response.ok) throw new ExtractionFailure('provider_error', `the extraction provider answered ${response.status}`);
    const body = (await response.json()) as { choices?: { message?: { content?: string } }[] };
    const content = body.choices?.[0]?.message?.content;
    if (!content) throw new ExtractionFailure('provider_error', 'the extraction provider gave no answer');
    return checked(JSON.parse(content));
  } catch (error) {
    if (error instanceof ExtractionFailure) throw error;
    if (signal.aborted) throw new ExtractionFailure('timeout', 'extraction was stopped at its time limit');
    throw new ExtractionFailure('provider_error', `the extraction provider failed: ${(error as Error)?.message ?? String(error)}`);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}

const isMoney = (v: unknown): v is string => typeof v === 'string' && /^-?\d+(?:\.\d{1,4})?$/.test(v);
const isDate = (v: unknown): v is string => typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(v));
const s = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

/** The provider's answer, each field kept only if it passes our checks; confidence 0.7 (below checked local reads). */
export function checked(raw: Record<string, any>): ParsedFields {
  const sup = raw?.supplier ?? {};
  const addr = sup.address ?? {};
  const iban = s(raw?.iban)?.replace(/\s/g, '').toUpperCase() ?? null;
  const vat = s(sup.vat_id)?.replace(/[\s.-]/g, '').toUpperCase() ?? null;
  const reg = s(sup.registration_id);
  const bic = s(raw?.bic)?.toUpperCase() ?? null;
  const fields: ExtractedFields = {
    supplier: {
      name: s(sup.name),
      registration_id: reg && (!/^\d{8}$/.test(reg) || isValidIco(reg)) ? reg : null,
      tax_id: s(sup.tax_id),
      vat_id: vat && isValidVatId(vat) ? vat : null,
      address: { street: s(addr.street), municipality: s(addr.municipality), postal_code: s(addr.postal_code), country_alpha2: s(addr.country_alpha2)?.toUpperCase().slice(0, 2) ?? null },
    },
    document_number: s(raw?.document_number),
    issue_date: isDate(raw?.issue_date) ? raw.issue_date : null,
    due_date: isDate(raw?.due_date) ? raw.due_date : null,
    currency: /^[A-Z]{3}$/.test(s(raw?.currency) ?? '') ? raw.currency : null,
    subtotal: isMoney(raw?.subtotal) ? raw.subtotal : null,
    vat_total: isMoney(raw?.vat_total) ? raw.vat_total : null,
    total: isMoney(raw?.total) ? raw.total : null,
    vat_breakdown: Array.isArray(raw?.vat_breakdown) ? raw.vat_breakdown.filter((r: any) => isMoney(r?.base) && isMoney(r?.vat) && /^\d+(?:\.\d+)?$/.test(String(r?.rate))) : [],
    iban: iban && isValidIban(iban) ? iban : null,
    bic: bic && isValidBic(bic) ? bic : null,
    variable_symbol: /^\d{1,10}$/.test(s(raw?.variable_symbol) ?? '') ? raw.variable_symbol : null,
    line_items: Array.isArray(raw?.line_items)
      ? raw.line_items.filter((i: any) => typeof i?.name === 'string').map((i: any) => ({ name: i.name, quantity: isMoney(i.quantity) ? i.quantity : null, unit_price: isMoney(i.unit_price) ? i.unit_price : null, total: isMoney(i.total) ? i.total : null }))
      : [],
  };
  const confidence: Record<string, number> = {};
  const walk = (o: Record<string, unknown>, prefix: string) => {
    for (const [k, v] of Object.entries(o)) {
      const p = prefix ? `${prefix}.${k}` : k;
      if (v && typeof v === 'object' && !Array.isArray(v)) walk(v as Record<string, unknown>, p);
      else if (v !== null && !(Array.isArray(v) && v.length === 0)) confidence[p] = 0.7;
    }
  };
  walk(fields as unknown as Record<string, unknown>, '');
  return { fields, confidence };
}
