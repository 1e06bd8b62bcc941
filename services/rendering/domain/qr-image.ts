// The QR code image (qrcode): SVG in the page (vector, sharp in print, ~5 ms), PNG for checking a code
// by decoding it back. Medium error correction and a quiet zone of 4 modules: what banking apps
// expect when scanning paper.
import QRCode from 'qrcode';

const OPTIONS = { errorCorrectionLevel: 'M', margin: 4 } as const;

export function qrSvg(payload: string): Promise<string> {
  return QRCode.toString(payload, { ...OPTIONS, type: 'svg' });
}

export function qrPng(payload: string): Promise<Buffer> {
  return QRCode.toBuffer(payload, { ...OPTIONS, type: 'png', scale: 6 });
}

export const dataUri = (data: Buffer | string, contentType: string) => `data:${contentType};base64,${Buffer.from(data).toString('base64')}`;
