// The V8 heap bounds the embedded process runs with (`npm start`, scripts/start.sh; the volume bench).
// Left to its defaults V8 grows the heap under load long before it collects: on a million-row history
// the process went from 221 MB resident at start to 350–370 MB under a single client's reads, with
// 90–120 MB of the heap live (docs/decisions.md "Figures at a million rows"). Bounded, it collects
// sooner and stays near its live size; the bench showed no latency cost. EMBEDDED_HEAP_MB raises the
// old generation's bound (default 160) for a workload that needs more.
export const DEFAULT_EMBEDDED_HEAP_MB = 160;
/** New-space semi-space in MB (V8's default on 64-bit is 16: 32 MB of young generation). */
const SEMI_SPACE_MB = 4;

export function embeddedNodeFlags(env: NodeJS.ProcessEnv = process.env): string[] {
  const raw = env.EMBEDDED_HEAP_MB;
  const heap = raw === undefined || raw === '' ? DEFAULT_EMBEDDED_HEAP_MB : Number(raw);
  if (!Number.isSafeInteger(heap) || heap < 64) throw new Error(`EMBEDDED_HEAP_MB must be a whole number of MB, at least 64 (got "${raw}")`);
  return [`--max-old-space-size=${heap}`, `--max-semi-space-size=${SEMI_SPACE_MB}`];
}

// `node dist/deploy/embedded/node-flags.js` prints them for scripts/start.sh.
if (require.main === module) {
  try {
    process.stdout.write(`${embeddedNodeFlags().join(' ')}\n`);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
}
