import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { FsBlobStore } from '../../services/shared/blobs/fs';
import { serveSignedBlobs } from '../../gateway/http/blobs';
import { describeBlobContract } from './blobs.contract';

let server: http.Server;
afterAll(() => new Promise((resolve) => server?.close(resolve)));

describeBlobContract('filesystem (embedded)', async () => {
  const blobs = new FsBlobStore(mkdtempSync(path.join(os.tmpdir(), 'blobs-')), 'a-url-signing-secret-for-tests');
  const handler = serveSignedBlobs(blobs);
  server = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  blobs.setBaseUrl(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return blobs;
});

describe('embedded signed blob URLs', () => {
  it('expire', async () => {
    const blobs = new FsBlobStore(mkdtempSync(path.join(os.tmpdir(), 'blobs-')), 'a-url-signing-secret-for-tests');
    await blobs.put('k/expired.txt', Buffer.from('x'), 'text/plain');
    const url = new URL(await blobs.signedUrl('k/expired.txt', 60));
    const signature = url.searchParams.get('signature')!;
    expect(blobs.verify('k/expired.txt', url.searchParams.get('expires')!, signature)).toBe(true);
    expect(blobs.verify('k/expired.txt', String(Math.floor(Date.now() / 1000) - 1), signature)).toBe(false);
  });
});
