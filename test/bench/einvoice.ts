// `npm run bench` (last part; alone: npm run bench:einvoice): the e-invoice export's cost (issue #20,
// target ≤ 20 ms CPU per XML). What the rendering service spends per request on a cache miss — the
// EN 16931 model of the document and its XML in each syntax — measured as process CPU time (user +
// system, steadier than wall time on a shared machine) over BENCH_EINVOICE_N exports (default 500) of a
// 50-line invoice with two rates and discounts, after a warm-up. Report: .bench/einvoice-report.md and .json.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ciiXml } from '../../services/rendering/domain/einvoice/cii';
import { einvoiceModel } from '../../services/rendering/domain/einvoice/model';
import { ublXml } from '../../services/rendering/domain/einvoice/ubl';
import { formatMoney, Decimal } from '../../services/shared/money';
import { computeTotals, pricedLine } from '../../services/shared/totals';
import { CZ_SELLER, printable } from '../unit/einvoice.fixtures';

const N = Number(process.env.BENCH_EINVOICE_N ?? 500);
const TARGET_MS = 20;
const root = path.resolve(__dirname, '../../..');

/** A 50-line invoice whose totals the shared totals module computes (as the documents service does). */
function bigInvoice() {
  const lines = Array.from({ length: 50 }, (_, i) =>
    pricedLine(
      { name: `Položka ${i + 1}`, description: i % 3 ? '' : 'popis & <poznámka>', unit: i % 2 ? 'ks' : 'hod' },
      { quantity: new Decimal(1 + (i % 7)), unit_price: new Decimal(`${100 + i}.25`), vat_rate: new Decimal(i % 4 ? 21 : 12), discount: new Decimal(i % 5 ? 0 : 10) },
      'CZK',
    ),
  );
  const totals = computeTotals(lines, 'CZK');
  return printable({
    line_items: lines,
    ...totals,
    amount_due: totals.total,
  });
}

function cpuMsPerExport(write: (doc: ReturnType<typeof bigInvoice>) => string, doc: ReturnType<typeof bigInvoice>): number {
  for (let i = 0; i < 50; i++) write(doc); // warm-up (JIT)
  const start = process.cpuUsage();
  for (let i = 0; i < N; i++) write(doc);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / N;
}

const doc = bigInvoice();
const results = {
  ubl: cpuMsPerExport((d) => ublXml(einvoiceModel(d, CZ_SELLER)), doc),
  cii: cpuMsPerExport((d) => ciiXml(einvoiceModel(d, CZ_SELLER)), doc),
};
const rows = Object.entries(results).map(([format, ms]) => `| ${format} | ${ms.toFixed(3)} | ≤ ${TARGET_MS} | ${ms <= TARGET_MS ? 'PASS' : 'FAIL'} |`);
const report = [
  '# E-invoice export: CPU per XML',
  '',
  `${N} exports of a 50-line invoice per format (model + XML, no I/O), ${formatMoney(new Decimal(doc.total), 'CZK')} CZK.`,
  '',
  '| format | CPU ms per XML | target | |',
  '|---|---|---|---|',
  ...rows,
  '',
].join('\n');
mkdirSync(path.join(root, '.bench'), { recursive: true });
writeFileSync(path.join(root, '.bench/einvoice-report.md'), report);
writeFileSync(path.join(root, '.bench/einvoice-report.json'), JSON.stringify({ n: N, target_ms: TARGET_MS, cpu_ms_per_xml: results }, null, 2));
process.stdout.write(report);
