// The widened corpus and its fixed split (issue #21): which layout families, label wordings and scenarios
// the extractor may be developed against ("tuned"), and which are held out to measure how it reads what it
// was not built around. The split is by *kind of document*, not by random sample: a held-out document
// carries at least one family, wording or scenario that no tuned document has, so tuning on the tuned
// documents cannot fit the held-out ones. Changing these lists invalidates every figure measured before;
// docs/extraction.md "Tuned and held-out" records them with the figures.
import { CorpusDocument, Lang, Layout, makeDocument, Rand, rng, Scenario, Split, Wording } from './model';

export const TUNED_LAYOUTS: readonly Layout[] = ['classic', 'letterhead', 'purchaser_first', 'boxed', 'compact', 'receipt', 'receipt_58'];
export const HELD_OUT_LAYOUTS: readonly Layout[] = ['right_column', 'footer', 'sidebar', 'multipage', 'unlabelled', 'receipt_wide'];
export const TUNED_WORDINGS: readonly Wording[] = ['canonical', 'abbreviated'];
export const HELD_OUT_WORDINGS: readonly Wording[] = ['synonyms', 'bare'];
export const TUNED_SCENARIOS: readonly Scenario[] = ['standard', 'customer_ids'];
export const HELD_OUT_SCENARIOS: readonly Scenario[] = ['card_paid', 'long_items'];

const LANGS: Lang[] = ['sk', 'cs', 'en', 'de'];
const RECEIPT_SCENARIOS: readonly Scenario[] = ['standard', 'long_items']; // receipts have no bank details or customer

export function splitOf(layout: Layout, wording: Wording, scenario: Scenario): Split {
  return HELD_OUT_LAYOUTS.includes(layout) || HELD_OUT_WORDINGS.includes(wording) || HELD_OUT_SCENARIOS.includes(scenario) ? 'held_out' : 'tuned';
}

/**
 * Document i of the widened corpus: even i tuned, odd i held out; languages in turn; the layout families
 * of the split in turn (held-out documents cycle through every family, a tuned one among them only when
 * the wording or scenario is held out); wording and scenario drawn from the document's own seeded
 * generator. Photos and scans are degraded as phones and office scanners really do ('real').
 */
export function widenedDocument(seed: number, index: number): CorpusDocument {
  const split: Split = index % 2 === 0 ? 'tuned' : 'held_out';
  const k = Math.floor(index / 2);
  const lang = LANGS[k % 4];
  const r = new Rand(rng(seed * 104729 + index * 13 + 5));
  let layout: Layout;
  let wording: Wording;
  let scenario: Scenario;
  if (split === 'tuned') {
    layout = TUNED_LAYOUTS[Math.floor(k / 4 + k) % TUNED_LAYOUTS.length];
    wording = r.pick(TUNED_WORDINGS);
    scenario = r.pick(TUNED_SCENARIOS);
  } else {
    // Two of three held-out documents have a held-out family; the third a tuned family with a held-out wording.
    const families = k % 3 === 2 ? TUNED_LAYOUTS : HELD_OUT_LAYOUTS;
    layout = families[Math.floor(k / 4 + k) % families.length];
    wording = k % 3 === 2 ? r.pick(HELD_OUT_WORDINGS) : r.pick([...TUNED_WORDINGS, ...HELD_OUT_WORDINGS]);
    scenario = r.pick([...TUNED_SCENARIOS, ...HELD_OUT_SCENARIOS]);
  }
  const receipt = layout.startsWith('receipt');
  if (receipt && !RECEIPT_SCENARIOS.includes(scenario)) scenario = 'standard';
  if (receipt && scenario === 'long_items' && split === 'tuned') scenario = 'standard';
  if (splitOf(layout, wording, scenario) !== split) throw new Error(`corpus split broken at document ${index}`);
  return makeDocument(seed + 1000, index, lang, layout, {
    wording,
    scenario,
    split,
    degradation: 'real',
    items: layout === 'multipage' ? [14, 20] : scenario === 'long_items' && !receipt ? [4, 8] : undefined,
  });
}

export function widenedDocuments(seed: number, count: number): CorpusDocument[] {
  return Array.from({ length: count }, (_, i) => widenedDocument(seed, i));
}
