// Where workspace logos live, and how a client gets a time-limited link to one.
export interface LogoStore {
  put(key: string, data: Uint8Array, contentType: string): Promise<void>;
  signedUrl(key: string): Promise<string>;
}
