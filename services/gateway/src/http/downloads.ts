import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import { MESSAGES, sendError } from './errors';
import type { FileResult } from './route';

/**
 * A download: the whole file (200), or the one byte range asked for (206 with `Content-Range`),
 * `Content-Length` known before the first byte. A range outside the file, or several ranges, is
 * refused with 416 naming the size: a client resuming a download sends one `bytes=<received>-`.
 */
export async function sendFile(req: Request, res: Response, file: FileResult['file']): Promise<void> {
  res.setHeader('Accept-Ranges', 'bytes');
  let start = 0;
  let end = file.size - 1;
  if (req.headers.range !== undefined) {
    const ranges = req.range(file.size);
    if (ranges === -2) return sendError(res, 400, 'rango_invalido', MESSAGES.invalidParams, { Range: [MESSAGES.malformedRange] });
    if (ranges === -1 || ranges === undefined || ranges.type !== 'bytes' || ranges.length !== 1) {
      res.setHeader('Content-Range', `bytes */${file.size}`);
      return sendError(res, 416, 'rango_invalido', MESSAGES.rangeNotSatisfiable(file.size), {
        Range: [MESSAGES.rangeNotSatisfiableDetail],
      });
    }
    ({ start, end } = ranges[0]!);
    res.status(206).setHeader('Content-Range', `bytes ${start}-${end}/${file.size}`);
  }
  const body = await file.open(start, end);
  res.setHeader('Content-Type', file.contentType);
  res.setHeader('Content-Disposition', `attachment; filename="${file.filename}"`);
  res.setHeader('Content-Length', String(end - start + 1));
  // A client that goes away ends the pipeline; the response then has nothing left to say.
  await pipeline(body, res).catch(() => undefined);
}
