// The widened extraction corpus (issue #21) and its fixed split: held-out documents carry a layout
// family, label wording or scenario no tuned document has, so tuning on the tuned half cannot fit them;
// the documents are the same for the same seed; their amounts add up and their ids pass their checks.
import Decimal from 'decimal.js';
import { isValidIban } from '../../services/expenses/domain/extraction/checks';
import { corpusDocuments } from '../support/extraction-corpus/model';
import { HELD_OUT_LAYOUTS, HELD_OUT_SCENARIOS, HELD_OUT_WORDINGS, splitOf, TUNED_LAYOUTS, TUNED_SCENARIOS, TUNED_WORDINGS, widenedDocuments } from '../support/extraction-corpus/split';

describe('the widened corpus split', () => {
  const docs = widenedDocuments(1, 96);

  it('tuned documents use tuned families, wordings and scenarios only; every held-out one has something held out', () => {
    for (const d of docs.filter((x) => x.split === 'tuned')) {
      expect(TUNED_LAYOUTS).toContain(d.layout);
      expect(TUNED_WORDINGS).toContain(d.wording);
      expect(TUNED_SCENARIOS).toContain(d.scenario);
    }
    for (const d of docs.filter((x) => x.split === 'held_out')) {
      expect(HELD_OUT_LAYOUTS.includes(d.layout) || HELD_OUT_WORDINGS.includes(d.wording) || HELD_OUT_SCENARIOS.includes(d.scenario)).toBe(true);
      expect(splitOf(d.layout, d.wording, d.scenario)).toBe('held_out');
    }
  });

  it('no family, wording or scenario is on both sides', () => {
    expect(TUNED_LAYOUTS.filter((l) => HELD_OUT_LAYOUTS.includes(l))).toEqual([]);
    expect(TUNED_WORDINGS.filter((w) => HELD_OUT_WORDINGS.includes(w))).toEqual([]);
    expect(TUNED_SCENARIOS.filter((s) => HELD_OUT_SCENARIOS.includes(s))).toEqual([]);
  });

  it('half of the documents are held out, covering every held-out family and wording and all four languages', () => {
    const held = docs.filter((d) => d.split === 'held_out');
    expect(held).toHaveLength(48);
    for (const layout of HELD_OUT_LAYOUTS) expect(held.some((d) => d.layout === layout)).toBe(true);
    for (const wording of HELD_OUT_WORDINGS) expect(held.some((d) => d.wording === wording)).toBe(true);
    expect(new Set(held.map((d) => d.lang))).toEqual(new Set(['sk', 'cs', 'en', 'de']));
  });

  it('is the same for the same seed, and different for another', () => {
    expect(widenedDocuments(1, 12)).toEqual(docs.slice(0, 12));
    expect(widenedDocuments(2, 12).map((d) => d.fields.total)).not.toEqual(docs.slice(0, 12).map((d) => d.fields.total));
  });

  it('labels add up and pass their checks (VAT rows, items, IBAN)', () => {
    for (const d of docs) {
      const f = d.fields;
      expect(new Decimal(f.subtotal!).plus(f.vat_total!).eq(f.total!)).toBe(true);
      expect(f.vat_breakdown.reduce((s, r) => s.plus(r.base), new Decimal(0)).eq(f.subtotal!)).toBe(true);
      for (const it of f.line_items) expect(new Decimal(it.quantity!).times(it.unit_price!).eq(it.total!)).toBe(true);
      if (f.iban) expect(isValidIban(f.iban)).toBe(true);
      if (d.scenario === 'card_paid') expect([f.iban, f.bic, f.variable_symbol]).toEqual([null, null, null]);
    }
  });

  it('leaves the first corpus (the one the extractor tests read) as it was', () => {
    const first = corpusDocuments(7, 5);
    expect(first.map((d) => `${d.id} ${d.split} ${d.wording} ${d.scenario}`)).toEqual(['000-sk-classic', '001-cs-classic', '002-en-classic', '003-de-classic', '004-sk-receipt'].map((id) => `${id} tuned canonical standard`));
  });
});
