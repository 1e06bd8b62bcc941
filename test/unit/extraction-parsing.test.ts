// The pure parsing of the extraction: numbers, dates, checksums, fields chosen by checksums and by
// totals adding up, and the escalated tier's vote between readings.
import { digitsFromLookalikes, isValidBic, isValidIban, isValidIco, isValidVatId } from '../../services/expenses/domain/extraction/checks';
import { findDates, parseDate, plausibleDate } from '../../services/expenses/domain/extraction/dates';
import { parseFields } from '../../services/expenses/domain/extraction/fields';
import { linesFromText, linesFromWords } from '../../services/expenses/domain/extraction/layout';
import { mergeReadings } from '../../services/expenses/domain/extraction/merge';
import { findMoney, parseNumber } from '../../services/expenses/domain/extraction/numbers';

describe('numbers as printed', () => {
  it.each([
    ['1 234,50', '1234.50'],
    ['1\u00a0234,50', '1234.50'],
    ['1.234,50', '1234.50'],
    ['1,234.50', '1234.50'],
    ["1'234.50", '1234.50'],
    ['1234.5', '1234.5'],
    ['1.234.567,89', '1234567.89'],
    ['1,234,567.89', '1234567.89'],
    ['12,-', '12'],
    ['-12,00', '-12.00'],
    ['0,34', '0.34'],
    ['1.234', '1234'],
    ['1,5', '1.5'],
  ])('%s reads as %s', (raw, expected) => {
    expect(parseNumber(raw)).toBe(expected);
  });

  it('refuses what is no number', () => {
    expect(parseNumber('12.34.5')).toBeNull();
    expect(parseNumber('abc')).toBeNull();
  });

  it('finds the money amounts of a line, group separators included', () => {
    expect(findMoney('Celkom k úhrade  1 599,00 EUR').map((t) => t.value)).toEqual(['1599.00']);
    expect(findMoney('Total due £1,234.50 incl. VAT 205.75').map((t) => t.value)).toEqual(['1234.50', '205.75']);
    expect(findMoney('Gesamtbetrag 4.963,25 EUR').map((t) => t.value)).toEqual(['4963.25']);
  });
});

describe('dates as printed', () => {
  it.each([
    ['12. 3. 2026', '2026-03-12'],
    ['12.03.2026', '2026-03-12'],
    ['2026-03-12', '2026-03-12'],
    ['March 12, 2026', '2026-03-12'],
    ['12 March 2026', '2026-03-12'],
    ['12. März 2026', '2026-03-12'],
    ['12. marca 2026', '2026-03-12'],
    ['12. března 2026', '2026-03-12'],
    ['12/03/2026', '2026-03-12'],
    ['03/25/2026', '2026-03-25'],
  ])('%s reads as %s', (raw, iso) => {
    expect(parseDate(raw)).toBe(iso);
  });

  it('refuses impossible dates', () => {
    expect(parseDate('31.04.2026')).toBeNull();
    expect(parseDate('2026-13-01')).toBeNull();
  });

  it('finds every date of a line in order, the time not mistaken for one', () => {
    expect(findDates('Dátum: 08.11.2025 19:45 splatné 22. 11. 2025').map((d) => d.iso)).toEqual(['2025-11-08', '2025-11-22']);
  });

  it('plausible: from 2000 to two years ahead', () => {
    const now = new Date('2026-06-01T00:00:00Z');
    expect(plausibleDate('2026-03-12', now)).toBe(true);
    expect(plausibleDate('1999-12-31', now)).toBe(false);
    expect(plausibleDate('2029-01-01', now)).toBe(false);
  });
});

describe('checksums', () => {
  it('IBAN mod-97', () => {
    expect(isValidIban('SK3112000000198742637541')).toBe(true);
    expect(isValidIban('SK31 1200 0000 1987 4263 7541')).toBe(true);
    expect(isValidIban('SK3112000000198742637542')).toBe(false);
    expect(isValidIban('DE89370400440532013000')).toBe(true);
  });

  it('EU VAT ids per country (jsvat)', () => {
    expect(isValidVatId('CZ25596641')).toBe(true);
    expect(isValidVatId('CZ25596642')).toBe(false);
    expect(isValidVatId('DE136695976')).toBe(true);
    expect(isValidVatId('DE136695977')).toBe(false);
    expect(isValidVatId('XX123456789')).toBe(false);
  });

  it('Czech/Slovak IČO mod-11', () => {
    expect(isValidIco('25596641')).toBe(true);
    expect(isValidIco('35757442')).toBe(true);
    expect(isValidIco('25596642')).toBe(false);
    expect(isValidIco('1234567')).toBe(false);
  });

  it('BIC shape', () => {
    expect(isValidBic('TATRSKBX')).toBe(true);
    expect(isValidBic('COBADEFFXXX')).toBe(true);
    expect(isValidBic('TATR')).toBe(false);
  });

  it('reads OCR look-alikes as digits', () => {
    expect(digitsFromLookalikes('2O2I4S8')).toBe('2021458');
  });
});

const SK_INVOICE = `
FAKTÚRA                                              Faktúra č. 2026001
Dodávateľ:                                Odberateľ:
Alfa Trade s.r.o.                         Beta a.s.
Hlavná 12                                 Dlhá 5
811 01 Bratislava                         040 01 Košice
Slovenská republika                       IČO: 31333532
IČO: 35757442                             IČ DPH: SK2020317068
DIČ: 2021234567
IČ DPH: SK2021234567

Dátum vystavenia: 12. 3. 2026
Dátum dodania: 10. 3. 2026
Dátum splatnosti: 26. 3. 2026
IBAN: SK31 1200 0000 1987 4263 7541   BIC: TATRSKBX
Variabilný symbol: 2026001

Popis                       Množstvo      Jedn. cena     DPH %      Spolu
Konzultácia                 2             50,00          23 %       100,00
Hosting na 12 mesiacov      1             1 200,00       23 %       1 200,00

Sadzba      Základ      DPH
23 %        1 300,00    299,00

Spolu bez DPH               1 300,00 EUR
DPH celkom                  299,00 EUR
Celkom k úhrade             1 599,00 EUR
`;

describe('fields of an invoice (sk, two columns)', () => {
  const { fields, confidence } = parseFields(linesFromText(SK_INVOICE), { now: new Date('2026-06-01T00:00:00Z') });

  it('reads the supplier, not the customer beside it', () => {
    expect(fields.supplier).toEqual({
      name: 'Alfa Trade s.r.o.',
      registration_id: '35757442',
      tax_id: '2021234567',
      vat_id: 'SK2021234567',
      address: { street: 'Hlavná 12', municipality: 'Bratislava', postal_code: '811 01', country_alpha2: 'SK' },
    });
  });

  it('reads number, dates (not the delivery date), payment details', () => {
    expect(fields).toMatchObject({ document_number: '2026001', issue_date: '2026-03-12', due_date: '2026-03-26', iban: 'SK3112000000198742637541', bic: 'TATRSKBX', variable_symbol: '2026001', currency: 'EUR' });
  });

  it('reads totals that add up, the VAT row and the lines with their own digits', () => {
    expect(fields).toMatchObject({ subtotal: '1300.00', vat_total: '299.00', total: '1599.00', vat_breakdown: [{ rate: '23', base: '1300.00', vat: '299.00' }] });
    expect(fields.line_items).toEqual([
      { name: 'Konzultácia', quantity: '2', unit_price: '50.00', total: '100.00' },
      { name: 'Hosting na 12 mesiacov', quantity: '1', unit_price: '1200.00', total: '1200.00' },
    ]);
  });

  it('gives a confidence in [0, 1] for every field it read, highest where checksums and sums agree', () => {
    for (const value of Object.values(confidence)) expect(value).toBeGreaterThan(0), expect(value).toBeLessThanOrEqual(1);
    expect(confidence.iban).toBeGreaterThanOrEqual(0.9);
    expect(confidence.total).toBeGreaterThanOrEqual(0.95);
    expect(confidence['supplier.vat_id']).toBeGreaterThanOrEqual(0.9);
  });
});

describe('fields of a thermal receipt (de)', () => {
  const receipt = `
Bäckerei Schmidt GmbH
Hauptstraße 15
10115 Berlin
USt-IdNr.: DE136695976
Kassenbon
Brötchen
  4 x 0,45        1,80 B
Kaffee Bohnen     8,99 B
Mineralwasser     1,19 A
Gesamtbetrag      11,98 EUR
Satz        Netto      MwSt.
A 19%       1,00       0,19
B 7%       10,08       0,71
Bon-Nr. 81234
Datum: 08.11.2025 19:45
`;
  const { fields } = parseFields(linesFromText(receipt), { now: new Date('2026-06-01T00:00:00Z') });

  it('takes the letterhead as the supplier and reads the unlabelled date', () => {
    expect(fields.supplier.name).toBe('Bäckerei Schmidt GmbH');
    expect(fields.supplier.vat_id).toBe('DE136695976');
    expect(fields.supplier.address).toEqual({ street: 'Hauptstraße 15', municipality: 'Berlin', postal_code: '10115', country_alpha2: 'DE' });
    expect(fields.issue_date).toBe('2025-11-08');
    expect(fields.document_number).toBe('81234');
  });

  it('reads "4 x 0,45" lines, VAT rows whose base × rate is their VAT, and derives the net subtotal', () => {
    expect(fields.line_items).toEqual([
      { name: 'Brötchen', quantity: '4', unit_price: '0.45', total: '1.80' },
      { name: 'Kaffee Bohnen', quantity: '1', unit_price: '8.99', total: '8.99' },
      { name: 'Mineralwasser', quantity: '1', unit_price: '1.19', total: '1.19' },
    ]);
    expect(fields.vat_breakdown).toEqual([
      { rate: '19', base: '1.00', vat: '0.19' },
      { rate: '7', base: '10.08', vat: '0.71' },
    ]);
    expect(fields).toMatchObject({ total: '11.98', vat_total: '0.90', subtotal: '11.08' });
  });
});

describe('candidates chosen by checksums and sums', () => {
  it('skips an IBAN that fails mod-97 for one that passes', () => {
    const { fields } = parseFields(linesFromText('IBAN: SK31 1200 0000 1987 4263 7542\nIBAN: DE89 3704 0044 0532 0130 00'));
    expect(fields.iban).toBe('DE89370400440532013000');
  });

  it('reads OCR look-alikes in an IBAN only in the escalated tier (broad rules)', () => {
    const text = 'IBAN: DE89 37O4 0044 0532 0130 00';
    expect(parseFields(linesFromText(text)).fields.iban).toBeNull();
    expect(parseFields(linesFromText(text), { broad: true }).fields.iban).toBe('DE89370400440532013000');
  });

  it('prefers the total that equals subtotal + VAT', () => {
    const { fields, confidence } = parseFields(linesFromText('Subtotal 100.00\nVAT total 20.00\nTotal 120.00\nAmount due 50.00'));
    expect(fields.total).toBe('120.00');
    expect(confidence.total).toBeGreaterThan(0.9);
  });

  it('fills a missing quantity from total ÷ unit price when exact (an OCR-dropped column)', () => {
    const { fields } = parseFields(linesFromText('Bezeichnung      Menge    Einzelpreis    Gesamt\nDruckerwartung            57,84          289,20\nNettobetrag 289,20'));
    expect(fields.line_items).toEqual([{ name: 'Druckerwartung', quantity: '5', unit_price: '57.84', total: '289.20' }]);
  });

  it('reads a label without its diacritics, as OCR often prints it', () => {
    const { fields } = parseFields(linesFromText('Papiernictvo Pero s.r.o.\nICO: 35757442\nDIC: 2021234567'));
    expect(fields.supplier.registration_id).toBe('35757442');
    expect(fields.supplier.tax_id).toBe('2021234567');
  });

  it('a Czech DIČ with its country prefix is the VAT id', () => {
    const { fields } = parseFields(linesFromText('Dodavatel:\nKovo Brno s.r.o.\nIČO: 25596641\nDIČ: CZ25596641'));
    expect(fields.supplier).toMatchObject({ registration_id: '25596641', vat_id: 'CZ25596641', tax_id: null });
  });

  it('an invalid IČO is not taken', () => {
    expect(parseFields(linesFromText('Firma s.r.o.\nIČO: 25596642')).fields.supplier.registration_id).toBeNull();
  });
});

describe('layout from positioned words', () => {
  it('groups words into lines by height and into segments at wide gaps', () => {
    const h = 10;
    const lines = linesFromWords(
      [
        { text: 'Dodávateľ:', x0: 10, x1: 70, y: 100, height: h },
        { text: 'Odberateľ:', x0: 300, x1: 360, y: 101, height: h },
        { text: 'Alfa', x0: 10, x1: 35, y: 115, height: h },
        { text: 'Trade', x0: 38, x1: 70, y: 115, height: h },
      ],
      1,
      600,
    );
    expect(lines.map((l) => l.segments.map((s) => s.text))).toEqual([['Dodávateľ:', 'Odberateľ:'], ['Alfa Trade']]);
  });
});

describe('escalated tier: vote between readings', () => {
  const reading = (vat: string | null, total: string | null, c: number) => {
    const parsed = parseFields(linesFromText(''));
    parsed.fields.supplier.vat_id = vat;
    parsed.fields.total = total;
    parsed.confidence = { 'supplier.vat_id': c, total: c };
    return parsed;
  };

  it('takes the value most readings agree on', () => {
    const merged = mergeReadings([reading('CZ25596641', '10.00', 0.6), reading('CZ25596614', '10.00', 0.7), reading('CZ25596641', '10.00', 0.6)]);
    expect(merged.fields.supplier.vat_id).toBe('CZ25596641');
  });

  it('keeps the standard reading on a tie and never drops a field it had', () => {
    const merged = mergeReadings([reading('CZ25596641', '10.00', 0.8), reading(null, null, 0.9)]);
    expect(merged.fields.supplier.vat_id).toBe('CZ25596641');
    expect(merged.fields.total).toBe('10.00');
  });
});

// Issue #21: layouts read by geometry, ids and arithmetic, not by where one template put a field.
describe('layouts read by geometry (issue #21)', () => {
  const now = new Date('2026-06-01T00:00:00Z');
  const word = (text: string, x0: number, x1: number, y: number) => ({ text, x0, x1, y, height: 10 });

  it('a customer block interleaved with the other column ends at its column, not at the first row of the other column', () => {
    const lines = linesFromText(
      [
        'Bill to:                                        INVOICE',
        'Redwood Analytics Ltd',
        '                                                Invoice No.: INV-5176',
        '22 Queen Street',
        'VAT No.: GB408320679',
        'IBAN: GB39 NWBK 1122 0953 1775 51',
        'Description                 Qty        Amount',
        'Consulting services           1        100.00',
        'Bank details: IBAN: GB59 BARC 3459 8611 4072 95',
      ].join('\n'),
    );
    // The customer's IBAN is printed first; the supplier's account is the one outside the customer's block.
    expect(parseFields(lines, { now }).fields.iban).toBe('GB59BARC34598611407295');
  });

  it("the customer's ids and account on the same lines as the supplier's, one column over, are not the supplier's", () => {
    const lines = linesFromText(
      [
        'Dodáv.:                                   Odber.:',
        'Biela Hora a.s.                           Dunaj Consulting a.s.',
        'Štúrova 45                                Kukučínova 21',
        '949 01 Nitra                              010 01 Žilina',
        'IČO: 35757442                             IČO: 36421928',
        'IČ DPH: SK2021234567                      IBAN: SK76 1100 0000 0002 2449 1668',
        'Banka: IBAN: SK31 1200 0000 1987 4263 7541',
      ].join('\n'),
    );
    const { fields } = parseFields(lines, { now });
    expect(fields.supplier).toMatchObject({ name: 'Biela Hora a.s.', registration_id: '35757442', vat_id: 'SK2021234567' });
    expect(fields.iban).toBe('SK3112000000198742637541');
  });

  it('values under a row of labels are the words in each label’s column, however narrow the gaps', () => {
    const lines = linesFromWords(
      [
        // Labels left-aligned over their values; "Leistungsdatum" and "Fällig" close enough to make one segment.
        word('Re.-Nr.', 40, 80, 100), word('Datum', 112, 140, 100), word('Leistungsdatum', 178, 236, 100), word('Fällig', 244, 270, 100),
        // The values' gaps are narrower than the segment threshold: one segment on the line below.
        word('RE-2025-321', 40, 106, 115), word('27.12.2025', 112, 172, 115), word('27.12.2025', 178, 238, 115), word('03.01.2026', 244, 304, 115),
      ],
      1,
      600,
    );
    expect(lines[0].segments.map((seg) => seg.text)).toEqual(['Re.-Nr.', 'Datum', 'Leistungsdatum Fällig']);
    expect(lines[1].segments).toHaveLength(1);
    const { fields } = parseFields(lines, { now });
    expect(fields).toMatchObject({ document_number: 'RE-2025-321', issue_date: '2025-12-27', due_date: '2026-01-03' });
  });

  it('without a supplier label, the supplier is the company next to the first ids outside the customer block', () => {
    const lines = linesFromText(
      [
        'INVOICE                                       Harbour Supplies Ltd',
        'Invoice No.: INV-2044                         14 High Street',
        '                                              London SW1A 1AA',
        '                                              VAT No.: GB980780684',
        'Bill to:',
        'Kingsway Traders Ltd',
        'VAT No.: GB123456782',
      ].join('\n'),
    );
    expect(parseFields(lines, { now }).fields.supplier).toMatchObject({
      name: 'Harbour Supplies Ltd',
      vat_id: 'GB980780684',
      address: { street: '14 High Street', municipality: 'London', postal_code: 'SW1A 1AA' },
    });
  });

  it("an item table is read by its header's columns: a number column first, the rate after the total, a name wrapped onto the next line", () => {
    const lines = linesFromText(
      [
        '#    Bezeichnung                      Mg.        EP           Gesamt       MwSt.',
        '1    Webhosting Jahrespaket             1       288,78          288,78       19 %',
        '2    Softwarelizenz Projekt              2         5,61           11,22       19 %',
        '     Datenbankmigration',
        'Nettobetrag                                                    300,00 EUR',
      ].join('\n'),
    );
    expect(parseFields(lines, { now }).fields.line_items).toEqual([
      { name: 'Webhosting Jahrespaket', quantity: '1', unit_price: '288.78', total: '288.78' },
      { name: 'Softwarelizenz Projekt Datenbankmigration', quantity: '2', unit_price: '5.61', total: '11.22' },
    ]);
  });

  it('a row of labels over dates is not the item table’s header (“Leistungsdatum”)', () => {
    const lines = linesFromText(
      [
        'Rechnungsnummer    Rechnungsdatum    Leistungsdatum    Fällig am',
        'RE-2025-183        02.07.2025        02.07.2025        09.07.2025',
        'Bezeichnung            Menge      Einzelpreis      Gesamt',
        'Beratungsleistung         10           233,29    2.332,90',
        'Nettobetrag                                      2.332,90 EUR',
      ].join('\n'),
    );
    expect(parseFields(lines, { now }).fields.line_items).toEqual([{ name: 'Beratungsleistung', quantity: '10', unit_price: '233.29', total: '2332.90' }]);
  });

  it('an IBAN broken over two lines of a narrow column is joined and checked', () => {
    const lines = linesFromText(['Bank: IBAN: DE89 3704 0044', '0532 0130 00', 'Rechnung Nr. 12'].join('\n'));
    expect(parseFields(lines, { now }).fields.iban).toBe('DE89370400440532013000');
  });

  it("a due date under a label we do not know is the invoice's labelled date after the issue date, within 120 days", () => {
    const lines = linesFromText(['Rechnungsdatum: 02.03.2026', 'Zahlungstermin: 16.03.2026', 'IBAN: DE89 3704 0044 0532 0130 00'].join('\n'));
    const { fields, confidence } = parseFields(lines, { now });
    expect(fields).toMatchObject({ issue_date: '2026-03-02', due_date: '2026-03-16' });
    expect(confidence.due_date).toBeLessThan(0.6);
    // A receipt (no account, no variable symbol) has no due date.
    expect(parseFields(linesFromText(['Datum: 02.03.2026', 'Gültig bis: 16.03.2026'].join('\n')), { now }).fields.due_date).toBeNull();
  });
});
