// The blob store of a process that declares no use of blobs (ServiceModule.needs.blobs = false): it holds
// no MinIO keys, so any call is a wiring mistake and fails loudly rather than falling back to local files.
import { BlobStore } from './port';

export function noBlobStore(owner: string): BlobStore {
  const refuse = async (): Promise<never> => {
    throw new Error(`${owner} has no blob store: declare needs.blobs in its module (and give it the MinIO keys in the chart)`);
  };
  return { put: refuse, putStream: refuse, get: refuse, openStream: refuse, delete: refuse, signedUrl: refuse };
}
