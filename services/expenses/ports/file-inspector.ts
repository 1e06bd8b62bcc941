// The upload check: what a file really is, read from its bytes as they stream past (never held whole).
// The upload use case feeds every chunk through an inspection on its way to the blob store; a file the
// inspection refuses is abandoned before anything is stored (docs/expenses.md, "Upload").

import type { UploadType } from '../../shared/file-types';

// The allowed types and the size limit are the shared rule's, which the gateway applies too.
export { MAX_UPLOAD_BYTES, UPLOAD_TYPES } from '../../shared/file-types';
export type { UploadType };

export interface InspectedFile {
  /** Sniffed from the bytes, never taken from the client. */
  contentType: UploadType;
  size: number;
}

/**
 * One file's inspection. Both methods throw a DomainError (422) the moment the file is known to be
 * unacceptable: `file_empty`, `file_too_large`, `file_type_not_allowed`, `file_type_mismatch`,
 * `file_corrupt`.
 */
export interface FileInspection {
  push(chunk: Uint8Array): Promise<void>;
  /** After the last chunk: the verdict on the whole file. */
  end(): Promise<InspectedFile>;
}

export interface FileInspector {
  /** `declaredType`: the part's Content-Type as the client sent it; null or empty when it declared none. */
  inspect(declaredType: string | null): FileInspection;
}
