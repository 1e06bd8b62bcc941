// Embedded mode serves signed blob URLs (logos, files) itself: GET /blobs/<key>?expires=…&signature=….
// In distributed mode signed URLs are MinIO presigned URLs and this route is not mounted.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FsBlobStore } from '../../services/shared/blobs/fs';

export function serveSignedBlobs(blobs: FsBlobStore) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const key = decodeURIComponent(url.pathname.replace(/^\/blobs\//, ''));
    const expires = url.searchParams.get('expires') ?? '';
    const signature = url.searchParams.get('signature') ?? '';
    const json = (status: number, code: string, message: string) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code, message } }));
    };
    if (req.method !== 'GET' || !blobs.verify(key, expires, signature)) return json(403, 'invalid_signature', 'the link is invalid or has expired');
    const blob = await blobs.get(key);
    if (!blob) return json(404, 'resource_not_found', 'file not found');
    // A signed URL opened in a browser shows the file: never sniffed into something else, never a page with scripts.
    res.writeHead(200, {
      'content-type': blob.contentType,
      'content-length': blob.data.length,
      'cache-control': 'private, max-age=60',
      'x-content-type-options': 'nosniff',
      'content-security-policy': 'sandbox',
    });
    res.end(blob.data);
  };
}
