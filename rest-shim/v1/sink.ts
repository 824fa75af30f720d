import type { Request, Response } from 'express';
import type { ResponseSink } from '../../src/inference/inference.service.js';

/** An express response as the inference service's sink: JSON, or SSE written with backpressure. */
export function responseSink(req: Request, res: Response): ResponseSink {
  const gone = new AbortController();
  // `close` before the response finished means the client went away (disconnect or abort).
  res.on('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  req.on('aborted', () => gone.abort());
  const sink: ResponseSink & { firstByteAt?: number } = {
    signal: gone.signal,
    sendJson: (body) => {
      sink.firstByteAt ??= performance.now();
      if (!res.destroyed) res.status(200).json(body);
    },
    startStream: () => {
      res.status(200);
      res.setHeader('content-type', 'text/event-stream; charset=utf-8');
      res.setHeader('cache-control', 'no-cache, no-transform');
      res.setHeader('x-accel-buffering', 'no');
      res.flushHeaders();
    },
    write: (text) =>
      new Promise<void>((resolve) => {
        sink.firstByteAt ??= performance.now();
        if (res.destroyed || res.writableEnded) return resolve();
        if (res.write(text)) return resolve();
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      }),
    end: () => {
      if (!res.writableEnded) res.end();
    },
  };
  return sink;
}
