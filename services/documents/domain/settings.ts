// Per-workspace document settings: number format, currency and locale. Unset currency and locale
// follow the supplier's country (the workspace's legal identity), else EUR and English.
import { DuplicateId, VersionConflict } from '../../shared/store/port';
import { DocumentsStore, PartyData, SettingsRecord } from '../ports/documents-store';
import { currency, locale, Locale } from './fields';
import { DEFAULT_NUMBER_FORMAT, validateNumberFormat } from './number-format';

const EURO = ['at', 'be', 'cy', 'de', 'ee', 'es', 'fi', 'fr', 'gr', 'hr', 'ie', 'it', 'lt', 'lu', 'lv', 'mt', 'nl', 'pt', 'si', 'sk'];
const COUNTRY_CURRENCY: Record<string, string> = {
  ...Object.fromEntries(EURO.map((c) => [c, 'EUR'])),
  cz: 'CZK', pl: 'PLN', hu: 'HUF', ro: 'RON', bg: 'BGN', dk: 'DKK', se: 'SEK', no: 'NOK', ch: 'CHF', gb: 'GBP', us: 'USD', ca: 'CAD',
};
const COUNTRY_LOCALE: Record<string, Locale> = { cz: 'cs', sk: 'sk', de: 'de', at: 'de', li: 'de' };

export interface ResolvedSettings {
  number_format: string;
  currency: string;
  locale: Locale;
}

export interface SettingsChange {
  number_format?: string;
  currency?: string;
  locale?: string;
}

export class Settings {
  constructor(private readonly store: DocumentsStore) {}

  stored(accountId: number): Promise<SettingsRecord | null> {
    return this.store.settings.get(accountId);
  }

  /** The number format in force for the workspace (DEFAULT_NUMBER_FORMAT unless set). */
  async numberFormat(accountId: number): Promise<string> {
    return (await this.stored(accountId))?.number_format || DEFAULT_NUMBER_FORMAT;
  }

  /** The effective settings of a workspace whose supplier snapshot is `supplier`. */
  async resolve(accountId: number, supplier: PartyData): Promise<ResolvedSettings> {
    const record = await this.stored(accountId);
    const country = supplier.address?.country_alpha2 ?? '';
    return {
      number_format: record?.number_format || DEFAULT_NUMBER_FORMAT,
      currency: record?.currency || COUNTRY_CURRENCY[country] || 'EUR',
      locale: (record?.locale as Locale) || COUNTRY_LOCALE[country] || 'en',
    };
  }

  async set(accountId: number, change: SettingsChange): Promise<SettingsRecord> {
    const normalized: Partial<SettingsRecord> = {};
    if (change.number_format !== undefined) normalized.number_format = change.number_format === '' ? '' : validateNumberFormat(change.number_format);
    if (change.currency !== undefined) normalized.currency = change.currency === '' ? '' : currency(change.currency);
    if (change.locale !== undefined) normalized.locale = change.locale === '' ? '' : locale(change.locale, 'locale');
    for (let attempt = 0; attempt < 20; attempt++) {
      const at = new Date().toISOString();
      const current = await this.stored(accountId);
      try {
        if (!current) {
          return await this.store.settings.insert({ id: accountId, number_format: '', currency: '', locale: '', ...normalized, updated_at: at });
        }
        return await this.store.settings.update({ ...current, ...normalized, updated_at: at });
      } catch (err) {
        // A concurrent first write (DuplicateId) or update (VersionConflict): re-read and re-apply.
        if (!(err instanceof VersionConflict) && !(err instanceof DuplicateId)) throw err;
      }
    }
    throw new VersionConflict('document_settings', accountId);
  }
}
