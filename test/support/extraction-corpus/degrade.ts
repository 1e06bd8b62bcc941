// Degradations at the quality phones and office scanners really give (the widened corpus, issue #21):
// a phone photo seen at an angle (a perspective warp, not only a rotation), lit unevenly (a shadow
// across the page), slightly out of focus, JPEG at quality 50–65; a scan at 150 or 200 dpi, skewed,
// noisy, JPEG at quality 50. Seeded: the same Rand gives the same bytes.
import sharp from 'sharp';
import { Rand } from './model';

type Point = [number, number];

/** The 3×3 homography (row-major, h33 = 1) mapping each `from` corner to its `to` corner. */
export function homography(from: Point[], to: Point[]): number[] {
  const a: number[][] = [];
  for (let i = 0; i < 4; i++) {
    const [x, y] = from[i];
    const [u, v] = to[i];
    a.push([x, y, 1, 0, 0, 0, -u * x, -u * y, u]);
    a.push([0, 0, 0, x, y, 1, -v * x, -v * y, v]);
  }
  // Gaussian elimination with partial pivoting on the 8×9 augmented matrix.
  for (let c = 0; c < 8; c++) {
    let p = c;
    for (let r = c + 1; r < 8; r++) if (Math.abs(a[r][c]) > Math.abs(a[p][c])) p = r;
    [a[c], a[p]] = [a[p], a[c]];
    for (let r = 0; r < 8; r++) {
      if (r === c) continue;
      const k = a[r][c] / a[c][c];
      for (let j = c; j < 9; j++) a[r][j] -= k * a[c][j];
    }
  }
  return [...a.map((row, i) => row[8] / row[i]), 1];
}

/**
 * A phone photo of the page: on a table (margin of a tinted background), seen at an angle (each corner
 * moved by up to 6 % of the size), a shadow darkening one side by 25–50 %, blur, sensor noise, JPEG q50–65.
 */
export async function realPhoto(png: Buffer, r: Rand): Promise<Buffer> {
  const meta = await sharp(png).metadata();
  const pad = Math.round(meta.width! * 0.08);
  const tint = { r: 150 + r.int(0, 60), g: 140 + r.int(0, 60), b: 120 + r.int(0, 60) };
  const src = await sharp(png).flatten({ background: '#ffffff' }).extend({ top: pad, bottom: pad, left: pad, right: pad, background: tint }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const { width: w, height: h, channels } = src.info;
  const j = () => (0.01 + r.next() * 0.05) * Math.min(w, h);
  // Where the padded image's corners land in the photo; the inverse map takes a photo pixel to its source.
  const quad: Point[] = [[j(), j()], [w - j(), j()], [w - j(), h - j()], [j(), h - j()]];
  const inv = homography(quad, [[0, 0], [w, 0], [w, h], [0, h]]);
  const angle = r.next() * Math.PI * 2;
  const [dx, dy] = [Math.cos(angle), Math.sin(angle)];
  const depth = 0.25 + r.next() * 0.25;
  const out = Buffer.alloc(w * h * channels);
  const diag = Math.hypot(w, h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const d = inv[6] * x + inv[7] * y + 1;
      const sx = (inv[0] * x + inv[1] * y + inv[2]) / d;
      const sy = (inv[3] * x + inv[4] * y + inv[5]) / d;
      // Shadow: a linear ramp across the page from the lit side to the shaded one.
      const t = Math.min(1, Math.max(0, 0.5 + ((x - w / 2) * dx + (y - h / 2) * dy) / diag));
      const shade = 1 - depth * t * t;
      const o = (y * w + x) * channels;
      if (sx < 0 || sy < 0 || sx >= w - 1 || sy >= h - 1) {
        out[o] = tint.r * 0.6 * shade;
        out[o + 1] = tint.g * 0.6 * shade;
        out[o + 2] = tint.b * 0.6 * shade;
        continue;
      }
      const x0 = Math.floor(sx);
      const y0 = Math.floor(sy);
      const fx = sx - x0;
      const fy = sy - y0;
      for (let c = 0; c < channels; c++) {
        const i = (y0 * w + x0) * channels + c;
        const top = src.data[i] * (1 - fx) + src.data[i + channels] * fx;
        const bottom = src.data[i + w * channels] * (1 - fx) + src.data[i + w * channels + channels] * fx;
        out[o + c] = (top * (1 - fy) + bottom * fy) * shade;
      }
    }
  }
  const grain = Buffer.alloc(w * h * channels);
  for (let i = 0; i < grain.length; i++) grain[i] = Math.max(0, Math.min(255, out[i] + (r.next() + r.next() - 1) * 24));
  return sharp(grain, { raw: { width: w, height: h, channels } })
    .blur(0.6 + r.next() * 0.7)
    .jpeg({ quality: r.int(50, 65) })
    .toBuffer();
}

/**
 * An office scan: greyscale at 150 or 200 dpi (the screenshot is 192 dpi), skewed up to ±1°, noise,
 * JPEG q50; cut into pages of `pageHeight` screenshot pixels (null: one page).
 */
export async function realScanPages(png: Buffer, r: Rand, pageHeight: number | null): Promise<{ pages: Buffer[]; dpi: number }> {
  const dpi = r.pick([150, 150, 200]);
  const meta = await sharp(png).metadata();
  const height = meta.height!;
  const cuts: [number, number][] = [];
  const step = pageHeight ?? height;
  for (let top = 0; top < height - 8; top += step) cuts.push([top, Math.min(step, height - top)]);
  const pages: Buffer[] = [];
  for (const [top, h] of cuts) {
    const grey = await sharp(png)
      .extract({ left: 0, top, width: meta.width!, height: h })
      .flatten({ background: '#ffffff' })
      .greyscale()
      .resize({ width: Math.round((meta.width! * dpi) / 192) })
      .raw()
      .toBuffer({ resolveWithObject: true });
    const { width, height: gh } = grey.info;
    for (let i = 0; i < grey.data.length; i++) grey.data[i] = Math.max(0, Math.min(255, grey.data[i] + (r.next() + r.next() - 1) * 20));
    pages.push(
      await sharp(grey.data, { raw: { width, height: gh, channels: 1 } })
        .rotate((r.next() - 0.5) * 2, { background: '#ffffff' })
        .jpeg({ quality: 50 })
        .toBuffer(),
    );
  }
  return { pages, dpi };
}
