// Where rendered PDFs are kept, by a key derived from their ETag (the blob port underneath).
export interface PdfStore {
  get(key: string): Promise<Buffer | null>;
  put(key: string, pdf: Buffer): Promise<void>;
}
