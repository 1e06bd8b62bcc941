// PDF.js (through unpdf's bundled, font- and cmap-free build) loaded by Node's own `require`.
// unpdf's CommonJS entry reaches PDF.js with a dynamic `import()`, which jest's CommonJS runtime
// cannot run; PDF.js itself is an ES module without top-level await, which Node ≥ 20.19 `require`s
// natively. `process.getBuiltinModule` hands out the real `module` builtin (jest substitutes its own
// for `require('module')`), so one code path works in jest, in `dist/` and in the service.
import path from 'node:path';

/** The subset of PDF.js this adapter uses. */
export interface PdfJs {
  getDocument(params: Record<string, unknown>): { promise: Promise<PdfDocument>; destroy(): Promise<void> };
  OPS: Record<string, number>;
}

export interface PdfDocument {
  numPages: number;
  getPage(n: number): Promise<PdfPage>;
  destroy(): Promise<void>;
}

export interface PdfTextItem {
  str?: string;
  transform: number[];
  width: number;
  height: number;
  hasEOL?: boolean;
}

export interface PdfImage {
  width: number;
  height: number;
  /** 1 = grayscale 1 byte/px, 2 = RGB 3 bytes/px, 3 = RGBA 4 bytes/px (PDF.js ImageKind). */
  kind: number;
  data: Uint8Array | Uint8ClampedArray;
}

export interface PdfPage {
  getViewport(params: { scale: number }): { width: number; height: number };
  getTextContent(): Promise<{ items: PdfTextItem[] }>;
  getOperatorList(): Promise<{ fnArray: number[]; argsArray: unknown[][] }>;
  objs: { get(key: string, callback?: (value: unknown) => void): unknown };
  cleanup(): void;
}

let loaded: Promise<PdfJs> | undefined;

export function loadPdfJs(): Promise<PdfJs> {
  loaded ??= (async () => {
    const nodeModule = process.getBuiltinModule('node:module') as typeof import('node:module');
    const nodeRequire = nodeModule.createRequire(__filename);
    const entry = nodeRequire.resolve('unpdf'); // …/unpdf/dist/index.cjs
    const bundle = nodeRequire(path.join(path.dirname(entry), 'pdfjs.mjs')) as { resolvePDFJS(): Promise<PdfJs> };
    return bundle.resolvePDFJS();
  })();
  return loaded;
}
