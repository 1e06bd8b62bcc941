import { BlobStore } from '../../shared/blobs/port';
import { LogoStore } from '../ports/logos';

/** Logo links live an hour; clients re-fetch the account for a fresh one (spec §2 logo_url). */
const LOGO_URL_TTL_SECONDS = 3600;

export function blobLogos(blobs: BlobStore): LogoStore {
  return {
    put: (key, data, contentType) => blobs.put(key, Buffer.from(data), contentType),
    signedUrl: (key) => blobs.signedUrl(key, LOGO_URL_TTL_SECONDS),
  };
}
