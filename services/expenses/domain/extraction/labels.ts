// What invoices and receipts in sk, cs, en and de print before each field. Ordered most specific
// first: the first label that matches a line wins for that line.

/** OCR drops or swaps diacritics ("ICO", "Fállig"): every accented letter of a label also matches its
 * base letter and the base letter's other accented forms. */
const VARIANTS: Record<string, string> = { a: 'aáäàâ', c: 'cč', d: 'dď', e: 'eéěè', i: 'ií', l: 'lľĺ', n: 'nň', o: 'oóôö', r: 'rřŕ', s: 'sšß', t: 'tť', u: 'uúůü', y: 'yý', z: 'zž' };
export function tolerant(source: string): string {
  let inClass = false;
  let out = '';
  for (const ch of source) {
    if (ch === '[' && !out.endsWith('\\')) inClass = true;
    else if (ch === ']' && !out.endsWith('\\')) inClass = false;
    const base = ch.normalize('NFD')[0].toLowerCase();
    const variants = ch.normalize('NFD').length > 1 ? VARIANTS[base] : undefined;
    out += variants ? (inClass ? variants : `[${variants}]`) : ch;
  }
  return out;
}

/** `\b` knows ASCII letters only ("IČ" ends in a non-word character); labels use a letter-aware boundary. */
const BOUNDARY = '(?:(?<=[\\p{L}\\p{N}])(?![\\p{L}\\p{N}])|(?<![\\p{L}\\p{N}])(?=[\\p{L}\\p{N}]))';
const re = (parts: string[]) => new RegExp(`(?:${parts.map((p) => tolerant(p).replace(/\\b/g, BOUNDARY)).join('|')})`, 'iu');

export const LABELS = {
  supplierBlock: re(['dodávateľ', 'dodavatel', 'predávajúci', 'prodávající', 'supplier', 'seller', 'vendor', 'lieferant', 'verkäufer', 'rechnungssteller', 'auftragnehmer', '^from\\b', '^dodáv\\.', '^dod\\.', '^von\\b']),
  customerBlock: re(['odberateľ', 'odběratel', 'kupujúci', 'kupující', 'customer', 'bill to', 'billed to', 'buyer', 'kunde', 'rechnungsempfänger', 'auftraggeber', 'käufer', '^to\\b', '^odber\\.', '^odb\\.', '^an\\b']),
  documentNumber: re([
    'číslo faktúry', 'číslo faktury', 'faktúra\\s*(?:č\\.|číslo)', 'faktura\\s*(?:č\\.|číslo)', 'číslo dokladu', 'doklad\\s*č\\.', 'účtenka\\s*č\\.', 'bloček\\s*č\\.',
    'invoice\\s*(?:no\\.?|number|#)', 'receipt\\s*(?:no\\.?|number|#)', 'document\\s*(?:no\\.?|number)',
    'č\\.\\s*fa\\b', 'č\\.\\s*dokl\\.?', 'č\\.\\s*úč\\.?', 'inv\\.\\s*(?:no\\.?|#)', 'rcpt\\.?\\s*(?:no\\.?|#)', 're\\.?-?\\s?nr\\.?', '^bon\\b(?=\\s*[:#]?\\s*\\d)',
    'rechnungs-?\\s?(?:nummer|nr\\.?)', 'rechnung\\s*(?:nr\\.?|nummer)', 'beleg-?\\s?(?:nr\\.?|nummer)', 'bon-?\\s?(?:nr\\.?|nummer)',
  ]),
  issueDate: re([
    'dátum vyhotovenia', 'dátum vystavenia', 'datum vystavení', 'vystaven[áéo]', 'dát\\.\\s*vyst\\.?', '^vyst\\.', 'date of issue', 'issue date', 'invoice date', 'issued(?: on)?',
    'rechnungsdatum', 'ausstellungsdatum', 'belegdatum',
  ]),
  genericDate: re(['^dátum\\b', '^datum\\b', '^date\\b', '\\bdátum:', '\\bdatum:', '\\bdate:']),
  dueDate: re(['dátum splatnosti', 'datum splatnosti', 'splatnosť', 'splatnost', 'splat\\.', '^due\\b', 'due date', 'payment due', 'due on', 'pay by', 'fällig(?:keitsdatum| am| bis)?', 'zahlbar bis', 'zahlungsziel']),
  taxPointDate: re(['dátum dodania', 'datum zdanitelného plnění', 'duzp', 'datum plnění', 'dátum zdaniteľného', 'leistungsdatum', 'lieferdatum', 'tax point', 'supply date', 'delivery date']),
  total: re([
    'celkom k úhrade', 'celkem k úhradě', 'k úhrade', 'k úhradě', 'suma k úhrade', 'spolu k úhrade', 'amount due', 'total due', 'balance due', 'total to pay',
    'zu zahlen', 'zahlbetrag', 'gesamtbetrag', 'rechnungsbetrag', 'endbetrag', 'celkom s dph', 'celkem s dph', 'spolu s dph', 'total incl', 'gesamt brutto', 'brutto gesamt', 'summe brutto',
    'celková suma', 'celková částka', 'celkom', 'celkem', 'spolu', 'total', 'summe', 'gesamt', 'suma', 'k úhr\\.', '^brutto[\\s:]',
  ]),
  subtotal: re(['bez dph', 'základ dane', 'základ daně', 'celkom bez', 'celkem bez', 'subtotal', 'sub-total', 'net total', 'total net', 'total excl', 'netto', 'nettobetrag', 'zwischensumme', 'summe netto', '\\bnet\\b', '^zákl(?:ad\\b|\\.)']),
  vatTotal: re(['dph celkom', 'dph celkem', 'celkom dph', 'celkem dph', 'daň celkom', 'vat total', 'total vat', 'vat amount', 'mwst\\.? gesamt', 'summe mwst', 'summe ust', 'umsatzsteuer', '^mwst', '^ust', '^vat\\b', '^dph\\b', '\\bdph\\b', '\\bvat\\b', 'mwst', 'ust\\.']),
  vatRecap: re(['rekapitulácia', 'rekapitulace', 'sadzba', 'sazba', 'vat rate', 'vat summary', 'steuersatz', 'mwst-satz', 'ust-satz']),
  iban: re(['iban']),
  bic: re(['bic', 'swift']),
  variableSymbol: re(['variabilný symbol', 'variabilní symbol', 'var\\. ?symbol', '\\bv\\.? ?s\\.?(?=[:\\s])']),
  registrationId: re(['\\bičo\\b', '\\bič(?!\\s*dph)\\b', 'reg(?:istration)?\\.?\\s*(?:no|number|id)', 'company\\s*(?:no|number|id|reg)', '\\bco\\.\\s*no\\b', 'handelsregister', 'registernummer', 'firmenbuch', '\\bhrb?\\b']),
  vatId: re(['ič dph', 'ič\\s*dph', 'vat\\s*(?:id|no|number|reg)', 'ust-?\\s?id(?:nr)?', 'umsatzsteuer-?id', 'ust\\.?-?idnr', 'mwst-?nr']),
  taxId: re(['\\bdič\\b', 'steuer-?nummer', 'st\\.?-?nr', 'tax\\s*(?:id|no|number)', '\\butr\\b']),
  itemHeader: re(['popis', 'položka', 'názov', 'označenie', 'description', 'item', 'bezeichnung', 'artikel', 'leistung', 'produkt', 'product', 'tovar', 'zboží']),
  itemHeaderQuantity: re(['množ', 'mn\\.', 'počet', 'qty', 'quantity', 'menge', 'mg\\.', 'anz', 'ks\\b', 'units']),
  itemHeaderUnitPrice: re(['jedn\\.?\\s*cena', 'j\\.\\s*cena', 'cena\\s*(?:za|/)\\s*(?:mj|jedn)', 'jednotková', 'unit\\s*price', '^price\\b', 'einzelpreis', '^ep\\b']),
  itemHeaderAmount: re(['^spolu\\b', '^celkem\\b', '^celkom\\b', '^amount\\b', '^total\\b', '^gesamt(?:preis)?\\b', '^gp\\b', '^betrag\\b']),
};

/** Country names and the ISO codes they stand for. */
export const COUNTRIES: [RegExp, string][] = [
  [/\b(?:slovensk[áo]( republika)?|slovakia|slovak republic|slowakei)\b/iu, 'SK'],
  [/\b(?:česk[áo]( republika)?|czech republic|czechia|tschechien)\b/iu, 'CZ'],
  [/\b(?:deutschland|germany|nemecko|německo|bundesrepublik deutschland)\b/iu, 'DE'],
  [/\b(?:united kingdom|great britain|england|veľká británia)\b/iu, 'GB'],
  [/\b(?:österreich|austria|rakúsko|rakousko)\b/iu, 'AT'],
  [/\b(?:ireland|irland)\b/iu, 'IE'],
];

export const CURRENCY_SIGNS: [RegExp, string][] = [
  [/\bEUR\b|€/u, 'EUR'],
  [/\bCZK\b|\bKč\b|\bKc\b/u, 'CZK'],
  [/\bGBP\b|£/u, 'GBP'],
  [/\bUSD\b|US\$/u, 'USD'],
  [/\bCHF\b/u, 'CHF'],
  [/\bPLN\b|\bzł\b/u, 'PLN'],
  [/\bHUF\b|\bFt\b/u, 'HUF'],
];

/** Legal forms that mark a line as a company name. */
export const LEGAL_FORM = /\b(?:s\.\s?r\.\s?o\.|spol\.\s?s\s?r\.\s?o\.|a\.\s?s\.|k\.\s?s\.|v\.\s?o\.\s?s\.|GmbH|AG|UG|KG|e\.\s?K\.|OHG|Ltd\.?|Limited|PLC|LLP|Inc\.?|SE)(?=$|[\s,])/u;

/** Titles at the top of a document that are not the supplier's name. */
export const TITLES = /^(?:faktúra|faktura|daňový doklad|danový doklad|invoice|tax invoice|receipt|rechnung|quittung|kassenbon|pokladničný doklad|pokladní doklad|účtenka|paragon|bon|beleg|zjednodušený daňový doklad|proforma)\b/iu;
