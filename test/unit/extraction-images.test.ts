// Images before OCR: a photo of a page on a table is cut to its paper (issue #21), a scan or a
// screenshot that is all paper is left whole.
import sharp from 'sharp';
import { paperBox } from '../../services/expenses/extraction/images';

/** A grey table with a white sheet at (left, top, width, height) carrying a few dark text bars. */
async function photoOfSheet(sheet: { left: number; top: number; width: number; height: number }, table = 90): Promise<Buffer> {
  const text = Array.from({ length: 12 }, (_, i) => ({ input: { create: { width: Math.round(sheet.width * 0.6), height: 8, channels: 3 as const, background: '#222' } }, left: sheet.left + 20, top: sheet.top + 30 + i * 30 }));
  return sharp({ create: { width: 600, height: 900, channels: 3, background: { r: table, g: table + 10, b: table } } })
    .composite([{ input: { create: { width: sheet.width, height: sheet.height, channels: 3, background: '#f4f4f0' } }, left: sheet.left, top: sheet.top }, ...text])
    .png()
    .toBuffer();
}

describe('the paper in a photo', () => {
  it('is the bright sheet on the darker table, with a small margin', async () => {
    const sheet = { left: 80, top: 100, width: 420, height: 700 };
    const box = await paperBox(sharp(await photoOfSheet(sheet)).greyscale(), 600, 900);
    expect(box).not.toBeNull();
    expect(Math.abs(box!.left - sheet.left)).toBeLessThan(15);
    expect(Math.abs(box!.top - sheet.top)).toBeLessThan(20);
    expect(Math.abs(box!.left + box!.width - (sheet.left + sheet.width))).toBeLessThan(15);
    expect(Math.abs(box!.top + box!.height - (sheet.top + sheet.height))).toBeLessThan(20);
  });

  it('is no crop when the paper fills the image (a scan, a screenshot)', async () => {
    const page = await photoOfSheet({ left: 0, top: 0, width: 600, height: 900 });
    expect(await paperBox(sharp(page).greyscale(), 600, 900)).toBeNull();
  });

  it('is no crop when nothing stands out from the table', async () => {
    const flat = await photoOfSheet({ left: 80, top: 100, width: 420, height: 700 }, 235);
    expect(await paperBox(sharp(flat).greyscale(), 600, 900)).toBeNull();
  });
});
