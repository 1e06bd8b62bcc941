import { LegalIdentity } from '../../gen/invoicing/identity/v1/identity';

export function parsePositiveId(raw: string, flag: string): number {
  if (!/^[1-9]\d{0,15}$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw new Error(`${flag} must be a positive integer`);
  return Number(raw);
}

export function parseNumberMap(entries: string[] | undefined, flag: string): Record<string, number> {
  const map: Record<string, number> = {};
  for (const entry of entries ?? []) {
    const match = /^([a-z_][a-z0-9_]*)=(\d{1,15})$/.exec(entry);
    if (!match) throw new Error(`${flag} takes name=N (a non-negative integer), got "${entry}"`);
    map[match[1]] = Number(match[2]);
  }
  return map;
}

const STRING_FIELDS = [
  'name', 'registration_id', 'tax_id', 'vat_id', 'vat_payer_type', 'vat_period', 'email', 'phone_number', 'web', 'legal_form',
] as const;
const ADDRESS_FIELDS = ['name', 'street', 'municipality', 'postal_code', 'country_alpha2', 'contact'] as const;

function parseAddress(value: unknown, field: string) {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw new Error(`${field} must be an object`);
  const input = value as Record<string, unknown>;
  for (const key of Object.keys(input)) if (!(ADDRESS_FIELDS as readonly string[]).includes(key)) throw new Error(`${field}.${key} is not an address field`);
  const out = Object.fromEntries(ADDRESS_FIELDS.map((k) => [k, typeof input[k] === 'string' ? (input[k] as string) : '']));
  if (out.country_alpha2 && !/^[a-z]{2}$/.test(out.country_alpha2)) throw new Error(`${field}.country_alpha2 must be two lowercase letters`);
  return out as unknown as LegalIdentity['address'];
}

/** The legal_identity JSON of §2; unknown fields and wrong types are refused. */
export function parseLegalIdentity(json: string): LegalIdentity {
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(json);
  } catch {
    throw new Error('--data is not valid JSON');
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new Error('--data must be a JSON object');
  const known = [...STRING_FIELDS, 'legal_form_id', 'address', 'postal_address'];
  for (const key of Object.keys(data)) if (!known.includes(key)) throw new Error(`${key} is not a legal_identity field`);
  const out: Record<string, unknown> = {};
  for (const key of STRING_FIELDS) {
    if (data[key] !== undefined && typeof data[key] !== 'string') throw new Error(`${key} must be a string`);
    out[key] = (data[key] as string | undefined) ?? '';
  }
  if (data.legal_form_id !== undefined && data.legal_form_id !== null && !Number.isInteger(data.legal_form_id)) {
    throw new Error('legal_form_id must be an integer');
  }
  out.legal_form_id = (data.legal_form_id as number | null | undefined) ?? undefined;
  out.address = parseAddress(data.address, 'address');
  out.postal_address = parseAddress(data.postal_address, 'postal_address');
  return out as unknown as LegalIdentity;
}
