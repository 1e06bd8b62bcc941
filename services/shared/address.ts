/** The Address object of spec §2 (address and postal_address of legal entities). */
export interface AddressData {
  name: string;
  street: string;
  municipality: string;
  postal_code: string;
  /** Two-letter lowercase ISO 3166-1 code. */
  country_alpha2: string;
  contact: string;
}
