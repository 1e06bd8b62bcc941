/**
 * The Address object of spec §2 (address and postal_address of legal entities). Every part is optional;
 * an absent part is "" here and in proto (proto3 strings have no presence) and null in the API
 * (gateway/routes/presenters.ts textOrNull) — never the text of a JavaScript value.
 */
export interface AddressData {
  name: string;
  street: string;
  municipality: string;
  postal_code: string;
  /** Two-letter lowercase ISO 3166-1 code. */
  country_alpha2: string;
  contact: string;
}
