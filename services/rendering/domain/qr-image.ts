// The QR code as a PNG (qrcode), embedded in the page as a data URI. Medium error correction and a
// quiet zone of 4 modules: what banking apps expect when scanning paper.
import QRCode from 'qrcode';

export async function qrPng(payload: string): Promise<Buffer> {
  return QRCode.toBuffer(payload, { type: 'png', errorCorrectionLevel: 'M', margin: 4, scale: 6 });
}

export const pngDataUri = (png: Buffer, contentType = 'image/png') => `data:${contentType};base64,${png.toString('base64')}`;
