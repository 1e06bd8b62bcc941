// Realistic, reproducible made-up data for the seeding command: people and companies of the countries
// the product serves, with addresses, identifiers and amounts. Every value is a pure function of the
// run's seed and an ordinal, so a record can be rebuilt anywhere (an invoice's purchaser snapshot is the
// legal entity it points to, generated again) without keeping millions of records in memory.
import type { AddressData } from '../../services/shared/address';

/** mulberry32: a small, fast, well-spread 32-bit PRNG. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The generator of one record: its values depend on (run seed, kind, ordinal) only. */
export function recordRandom(seed: number, kind: number, ordinal: number): () => number {
  return random(Math.imul(seed ^ 0x9e3779b9, 2654435761) ^ Math.imul(kind + 1, 0x85ebca6b) ^ Math.imul(ordinal + 1, 0xc2b2ae35));
}

export const pick = <T>(rnd: () => number, items: readonly T[]): T => items[Math.floor(rnd() * items.length)];
export const between = (rnd: () => number, min: number, max: number): number => min + Math.floor(rnd() * (max - min + 1));
const digits = (rnd: () => number, n: number) => Array.from({ length: n }, (_, i) => (i === 0 ? between(rnd, 1, 9) : between(rnd, 0, 9))).join('');

interface Country {
  code: string;
  currency: string;
  first: readonly string[];
  last: readonly string[];
  suffixes: readonly string[];
  cities: ReadonlyArray<readonly [string, string]>;
  streets: readonly string[];
  vatPrefix: string;
}

const COUNTRIES: readonly Country[] = [
  {
    code: 'cz', currency: 'CZK', vatPrefix: 'CZ',
    first: ['Jan', 'Petr', 'Jiří', 'Tomáš', 'Lucie', 'Tereza', 'Eva', 'Martin', 'Kateřina', 'Pavel', 'Zuzana', 'Ondřej'],
    last: ['Novák', 'Svoboda', 'Dvořák', 'Černý', 'Procházka', 'Kučera', 'Veselý', 'Horák', 'Němec', 'Marek', 'Pokorný', 'Král'],
    suffixes: ['s.r.o.', 'a.s.', 'v.o.s.', 'spol. s r.o.'],
    cities: [['Praha', '110 00'], ['Brno', '602 00'], ['Ostrava', '702 00'], ['Plzeň', '301 00'], ['Příbram', '261 01'], ['Olomouc', '779 00']],
    streets: ['Vinohradská', 'Národní', 'Husova', 'Masarykova', 'Palackého', 'Nádražní', 'Školní', 'Jiráskova'],
  },
  {
    code: 'sk', currency: 'EUR', vatPrefix: 'SK',
    first: ['Ján', 'Peter', 'Mária', 'Jozef', 'Anna', 'Michal', 'Zuzana', 'Lukáš', 'Katarína', 'Martin'],
    last: ['Horváth', 'Kováč', 'Varga', 'Tóth', 'Nagy', 'Baláž', 'Szabó', 'Molnár', 'Lukáč', 'Kollár'],
    suffixes: ['s.r.o.', 'a.s.', 'k.s.'],
    cities: [['Bratislava', '811 01'], ['Košice', '040 01'], ['Žilina', '010 01'], ['Nitra', '949 01'], ['Prešov', '080 01']],
    streets: ['Obchodná', 'Štúrova', 'Hlavná', 'Mlynská', 'Kollárova', 'Dunajská', 'Záhradnícka'],
  },
  {
    code: 'de', currency: 'EUR', vatPrefix: 'DE',
    first: ['Lukas', 'Anna', 'Jonas', 'Leonie', 'Felix', 'Marie', 'Paul', 'Sophie', 'Jürgen', 'Ursula'],
    last: ['Müller', 'Schmidt', 'Schneider', 'Fischer', 'Weber', 'Meyer', 'Wagner', 'Becker', 'Schulz', 'Hoffmann'],
    suffixes: ['GmbH', 'AG', 'GmbH & Co. KG', 'UG'],
    cities: [['Berlin', '10115'], ['München', '80331'], ['Hamburg', '20095'], ['Köln', '50667'], ['Dresden', '01067'], ['Leipzig', '04109']],
    streets: ['Hauptstraße', 'Bahnhofstraße', 'Gartenstraße', 'Schillerstraße', 'Goethestraße', 'Lindenallee'],
  },
  {
    code: 'at', currency: 'EUR', vatPrefix: 'ATU',
    first: ['Florian', 'Lena', 'Tobias', 'Julia', 'Stefan', 'Katharina', 'Andreas', 'Sabine'],
    last: ['Gruber', 'Huber', 'Bauer', 'Wagner', 'Pichler', 'Steiner', 'Moser', 'Mayer'],
    suffixes: ['GmbH', 'AG', 'KG', 'OG'],
    cities: [['Wien', '1010'], ['Graz', '8010'], ['Linz', '4020'], ['Salzburg', '5020'], ['Innsbruck', '6020']],
    streets: ['Mariahilfer Straße', 'Landstraße', 'Herrengasse', 'Getreidegasse', 'Kärntner Straße'],
  },
  {
    code: 'gb', currency: 'GBP', vatPrefix: 'GB',
    first: ['Oliver', 'Amelia', 'George', 'Isla', 'Harry', 'Ava', 'Jack', 'Emily'],
    last: ['Smith', 'Jones', 'Taylor', 'Brown', 'Williams', 'Wilson', 'Davies', 'Evans'],
    suffixes: ['Ltd', 'PLC', 'LLP'],
    cities: [['London', 'EC1A 1BB'], ['Manchester', 'M1 1AE'], ['Leeds', 'LS1 1UR'], ['Bristol', 'BS1 4DJ'], ['Edinburgh', 'EH1 1YZ']],
    streets: ['High Street', 'Station Road', 'Church Lane', 'Victoria Road', 'Green Lane', 'Mill Road'],
  },
];

/** Where workspaces and parties are: mostly Czech and Slovak, as the product's users. */
const COUNTRY_WEIGHTS = [0.5, 0.2, 0.15, 0.08, 0.07];

function country(rnd: () => number): Country {
  let r = rnd();
  for (let i = 0; i < COUNTRIES.length; i++) {
    if ((r -= COUNTRY_WEIGHTS[i]) < 0) return COUNTRIES[i];
  }
  return COUNTRIES[0];
}

const TRADES = ['Stavby', 'Software', 'Logistik', 'Consulting', 'Print', 'Elektro', 'Design', 'Agro', 'Trans', 'Media', 'Servis', 'Foods'];

/** A company or a sole trader, as a legal entity or a workspace's legal identity holds it. */
export interface Party {
  person: boolean;
  name: string;
  registration_id: string;
  vat_id: string;
  tax_id: string;
  email: string;
  phone: string;
  address: AddressData;
  country: string;
  /** The currency of its country: a workspace prices in it. */
  currency: string;
}

export function party(rnd: () => number): Party {
  const c = country(rnd);
  const person = rnd() < 0.3;
  const first = pick(rnd, c.first);
  const last = pick(rnd, c.last);
  const name = person ? `${first} ${last}` : `${last} ${pick(rnd, TRADES)} ${pick(rnd, c.suffixes)}`;
  const [city, postal] = pick(rnd, c.cities);
  const registration = digits(rnd, 8);
  const vatPayer = !person || rnd() < 0.4;
  const domain = `${last}${pick(rnd, TRADES)}`.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/[^a-z]/g, '');
  return {
    person,
    name,
    registration_id: registration,
    vat_id: vatPayer ? `${c.vatPrefix}${registration}` : '',
    tax_id: c.code === 'sk' ? digits(rnd, 10) : '',
    email: `${person ? first.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase() : 'office'}@${domain}.example`,
    phone: `+${between(rnd, 20, 49)} ${digits(rnd, 3)} ${digits(rnd, 3)} ${digits(rnd, 3)}`,
    address: { name: '', street: `${pick(rnd, c.streets)} ${between(rnd, 1, 199)}`, municipality: city, postal_code: postal, country_alpha2: c.code, contact: '' },
    country: c.code,
    currency: c.currency,
  };
}

/** What is sold and bought: line names, units and a plausible unit-price range (major units). */
export const GOODS: ReadonlyArray<readonly [string, string, number, number]> = [
  ['Consulting', 'h', 40, 180],
  ['Software development', 'h', 50, 150],
  ['Website hosting', 'month', 5, 80],
  ['Office chair', 'pcs', 90, 450],
  ['Printer paper A4', 'box', 15, 40],
  ['Transport of goods', 'km', 1, 3],
  ['Annual maintenance', 'year', 200, 2400],
  ['Training workshop', 'day', 300, 1500],
  ['Graphic design', 'h', 30, 120],
  ['Laptop', 'pcs', 600, 2200],
];

export const EXPENSE_NOTES = ['Office supplies', 'Fuel', 'Business trip', 'Team lunch', 'Software subscription', 'Phone bill', 'Rent', 'Courier', 'Hardware', 'Conference ticket'];

/** VAT rates in use by country (a line takes one of its country's). */
export const VAT_RATES: Record<string, readonly string[]> = { cz: ['21', '12', '0'], sk: ['23', '19', '5'], de: ['19', '7'], at: ['20', '10'], gb: ['20', '5', '0'] };

/** A money amount of `scale` decimals between min and max, as a decimal string (no binary float reaches money code). */
export function amount(rnd: () => number, min: number, max: number, scale = 2): string {
  const minor = between(rnd, min * 10 ** scale, max * 10 ** scale);
  const text = String(minor).padStart(scale + 1, '0');
  return scale ? `${text.slice(0, -scale)}.${text.slice(-scale)}` : text;
}
