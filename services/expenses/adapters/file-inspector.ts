// The upload check (ports/file-inspector.ts) on streamed bytes, in bounded memory: the type is judged
// from the first 4 KiB by the shared rule (services/shared/file-types.ts, which the gateway applies to
// the same bytes before it reads the rest), and the structure is walked as the chunks pass — a PNG chunk by
// chunk (lengths and CRCs, IHDR first, IEND present), a JPEG's segments up to its scan and its EOI
// marker at the end, a GIF's trailer, a PDF's `startxref` pointing at a cross-reference section or
// object that really starts there. A file that merely starts like one of the four types (a `%PDF-`
// header with nothing valid behind, a PNG cut off in its data) is `file_corrupt`.
import { crc32 } from 'node:zlib';
import { fail } from '../../shared/errors';
import { judgeFileType, SNIFF_BYTES } from '../../shared/file-types';
import { FileInspection, FileInspector, InspectedFile, MAX_UPLOAD_BYTES, UploadType } from '../ports/file-inspector';

/** The end of a file kept for the trailer checks (a PDF's startxref/%%EOF, a JPEG's EOI). */
const TAIL_BYTES = 2048;

const corrupt = (why: string) => fail.invalid('file_corrupt', `the file is damaged or not what it claims to be: ${why}`, 'file');

interface StructureWalk {
  push(chunk: Buffer, offset: number): void;
  end(tail: Buffer, size: number): void;
}

export const fileInspector: FileInspector = {
  inspect: (declaredType) => new Inspection(declaredType),
};

class Inspection implements FileInspection {
  private size = 0;
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail = Buffer.alloc(0);
  private type?: UploadType;
  private walk?: StructureWalk;

  constructor(private readonly declared: string | null) {}

  async push(input: Uint8Array): Promise<void> {
    const chunk = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    if (chunk.length === 0) return;
    if (this.size + chunk.length > MAX_UPLOAD_BYTES) {
      throw fail.invalid('file_too_large', `the file is larger than ${MAX_UPLOAD_BYTES / 1024 / 1024} MB`, 'file');
    }
    const offset = this.size;
    this.size += chunk.length;
    this.tail = Buffer.concat([this.tail, chunk.subarray(Math.max(0, chunk.length - TAIL_BYTES))]);
    if (this.tail.length > TAIL_BYTES) this.tail = this.tail.subarray(this.tail.length - TAIL_BYTES);
    if (!this.walk) {
      this.head.push(chunk);
      this.headBytes += chunk.length;
      if (this.headBytes >= SNIFF_BYTES) await this.sniff();
      return;
    }
    this.walk.push(chunk, offset);
  }

  private async sniff(): Promise<void> {
    const head = Buffer.concat(this.head, this.headBytes);
    this.head = [];
    const verdict = await judgeFileType(head, this.declared);
    if (!verdict.accepted) throw fail.invalid(verdict.code, verdict.message, 'file');
    this.type = verdict.type;
    this.walk = WALKS[this.type]();
    this.walk.push(head, 0);
  }

  async end(): Promise<InspectedFile> {
    if (this.size === 0) throw fail.invalid('file_empty', 'the file is empty', 'file');
    if (!this.walk) await this.sniff();
    this.walk!.end(this.tail, this.size);
    return { contentType: this.type!, size: this.size };
  }
}

/** Reads a stream as fixed-size fields and pass-through regions, in any chunking. */
abstract class FieldReader {
  private field: Buffer[] = [];
  private fieldBytes = 0;
  protected need = 0;
  /** Bytes to pass through (given to onSkip) before the next field. */
  protected skip = 0;
  protected stopped = false;

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length && !this.stopped) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - at);
        this.onSkip(chunk.subarray(at, at + n));
        this.skip -= n;
        at += n;
        continue;
      }
      const n = Math.min(this.need - this.fieldBytes, chunk.length - at);
      this.field.push(chunk.subarray(at, at + n));
      this.fieldBytes += n;
      at += n;
      if (this.fieldBytes === this.need) {
        const field = Buffer.concat(this.field, this.fieldBytes);
        this.field = [];
        this.fieldBytes = 0;
        this.onField(field);
      }
    }
  }

  protected onSkip(_bytes: Buffer): void {}
  protected abstract onField(field: Buffer): void;
}

/** PNG: signature, then chunks (length, type, data, CRC-32 over type and data); IHDR first, IEND last. */
class PngWalk extends FieldReader implements StructureWalk {
  private phase: 'signature' | 'header' | 'crc' = 'signature';
  private type = '';
  private crc = 0;
  private chunks = 0;
  private sawData = false;
  private ended = false;

  constructor() {
    super();
    this.need = 8;
  }

  protected onSkip(bytes: Buffer): void {
    this.crc = crc32(bytes, this.crc);
  }

  protected onField(field: Buffer): void {
    if (this.phase === 'signature') {
      this.phase = 'header';
      return;
    }
    if (this.phase === 'header') {
      const length = field.readUInt32BE(0);
      this.type = field.subarray(4, 8).toString('latin1');
      if (length > 0x7fffffff || !/^[A-Za-z]{4}$/.test(this.type)) throw corrupt('a PNG chunk header is invalid');
      if (this.chunks === 0 && this.type !== 'IHDR') throw corrupt('a PNG must start with its IHDR chunk');
      this.crc = crc32(field.subarray(4, 8));
      this.skip = length;
      this.phase = 'crc';
      this.need = 4;
      return;
    }
    if (field.readUInt32BE(0) !== this.crc >>> 0) throw corrupt(`the PNG chunk ${this.type} fails its checksum`);
    this.chunks++;
    if (this.type === 'IDAT') this.sawData = true;
    if (this.type === 'IEND') {
      // Bytes after IEND are ignored by every decoder; the image itself is complete.
      this.ended = true;
      this.stopped = true;
      return;
    }
    this.phase = 'header';
    this.need = 8;
  }

  end(): void {
    if (!this.ended || !this.sawData) throw corrupt('the PNG is truncated (no image data or no IEND chunk)');
  }
}

/** JPEG: SOI, marker segments up to the first scan (a frame header among them), EOI at the end. */
class JpegWalk extends FieldReader implements StructureWalk {
  private phase: 'soi' | 'marker' | 'length' = 'soi';
  private sawFrame = false;
  private sawScan = false;
  private marker = 0;

  constructor() {
    super();
    this.need = 2;
  }

  protected onField(field: Buffer): void {
    if (this.phase === 'soi') {
      this.phase = 'marker';
      return;
    }
    if (this.phase === 'marker') {
      if (field[0] !== 0xff) throw corrupt('a JPEG marker is missing where one must be');
      this.marker = field[1];
      // Fill bytes and markers without a length (TEM, RSTn) stand alone.
      if (this.marker === 0xff || this.marker === 0x01 || (this.marker >= 0xd0 && this.marker <= 0xd7)) return;
      if (this.marker === 0xd8 || this.marker === 0xd9) throw corrupt('the JPEG ends before its image data');
      this.phase = 'length';
      return;
    }
    const length = field.readUInt16BE(0);
    if (length < 2) throw corrupt('a JPEG segment length is invalid');
    if (this.marker >= 0xc0 && this.marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(this.marker)) this.sawFrame = true;
    this.skip = length - 2;
    this.phase = 'marker';
    if (this.marker === 0xda) {
      // The entropy-coded scan follows; from here on only the end marker is checked.
      this.sawScan = true;
      this.stopped = true;
    }
  }

  end(tail: Buffer): void {
    if (!this.sawFrame || !this.sawScan) throw corrupt('the JPEG has no frame or no scan');
    const trimmed = trimPadding(tail);
    if (trimmed.length < 2 || trimmed[trimmed.length - 2] !== 0xff || trimmed[trimmed.length - 1] !== 0xd9) {
      throw corrupt('the JPEG is truncated (no end-of-image marker)');
    }
  }
}

/** Zero bytes and line ends some writers append after a file's last byte. */
function trimPadding(tail: Buffer): Buffer {
  let end = tail.length;
  while (end > 0 && [0x00, 0x0a, 0x0d, 0x20].includes(tail[end - 1])) end--;
  return tail.subarray(0, end);
}

/** GIF: the trailer byte (0x3B) ends every complete GIF. */
class GifWalk implements StructureWalk {
  push(): void {}
  end(tail: Buffer, size: number): void {
    const trimmed = trimPadding(tail);
    if (size < 14 || trimmed[trimmed.length - 1] !== 0x3b) throw corrupt('the GIF is truncated (no trailer)');
  }
}

/**
 * PDF: `%PDF-n.n`, and at the end `startxref <offset> %%EOF` whose offset is where a cross-reference
 * table (`xref`) or a cross-reference stream object (`<n> <g> obj`) starts. Positions where those
 * start are noted as the bytes pass (a few numbers per object), so the check needs no second read.
 */
class PdfWalk implements StructureWalk {
  private readonly starts = new Set<number>();
  /** The previous chunk's last bytes: a keyword may straddle two chunks. */
  private carry = '';
  private carryAt = 0;
  private static readonly KEYWORD = /(?<![0-9A-Za-z])(?:xref|\d{1,10}[\0\t\n\f\r ]{1,8}\d{1,5}[\0\t\n\f\r ]{1,8}obj)/g;

  push(chunk: Buffer, offset: number): void {
    if (offset === 0 && !/^%PDF-\d\.\d/.test(chunk.toString('latin1', 0, 8))) throw corrupt('the PDF header is invalid');
    const text = this.carry + chunk.toString('latin1');
    const base = this.carryAt;
    for (const match of text.matchAll(PdfWalk.KEYWORD)) this.starts.add(base + match.index!);
    const keep = Math.min(40, text.length);
    this.carry = text.slice(text.length - keep);
    this.carryAt = offset + chunk.length - keep;
  }

  end(tail: Buffer, size: number): void {
    const text = tail.toString('latin1');
    const trailer = /startxref[\0\t\n\f\r ]+(\d{1,10})[\0\t\n\f\r ]+%%EOF[\0\t\n\f\r ]*$/.exec(text);
    if (!trailer) throw corrupt('the PDF is truncated or has no trailer (startxref … %%EOF)');
    const offset = Number(trailer[1]);
    if (offset >= size || !this.starts.has(offset)) throw corrupt('the PDF trailer points to no cross-reference section');
  }
}

const WALKS: Record<UploadType, () => StructureWalk> = {
  'image/png': () => new PngWalk(),
  'image/jpeg': () => new JpegWalk(),
  'image/gif': () => new GifWalk(),
  'application/pdf': () => new PdfWalk(),
};
