// Prints the lines and segments the parsers see for one text PDF (development aid for the tuned
// documents: `node -r ./scripts/ts-register.js test/bench/extraction-lines.ts FILE.pdf`).
import { readFileSync } from 'node:fs';
import { parseFields } from '../../services/expenses/domain/extraction/fields';
import { openPdf, textLines } from '../../services/expenses/extraction/pdf';

(async () => {
  const doc = await openPdf(new Uint8Array(readFileSync(process.argv[2])), { maxPages: 50, maxPixels: 40_000_000 } as never);
  const lines = (await textLines(doc)).flat();
  lines.forEach((l, i) => console.log(String(i).padStart(3), l.segments.map((s) => `[${s.x0.toFixed(2)}-${s.x1.toFixed(2)}] ${s.text}`).join(' | ')));
  console.log(JSON.stringify(parseFields(lines).fields));
})();
