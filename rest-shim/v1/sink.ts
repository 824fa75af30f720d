import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ResponseSink } from '../../src/inference/inference-call.js';
import { Cancellation } from '../../src/shared/cancellation.js';
import type { RateLimitHeaderStyle } from '../../src/inference/formats/client-format.js';
import { sendJson } from './errors.js';
import { writeWindow } from './limit-headers.js';

/**
 * A node response as the inference service's sink: JSON, or SSE written with backpressure. A client
 * that accepts no bytes for `writeTimeoutMs` while a write waits is cut: its request ends as a client
 * disconnect (billed for what was delivered) and its slot is freed, instead of holding both for as long
 * as it does not read.
 */
export function responseSink(req: IncomingMessage, res: ServerResponse, writeTimeoutMs: number, limitHeaders: RateLimitHeaderStyle): ResponseSink {
  const gone = new Cancellation();
  // `close` before the response finished means the client went away (disconnect or abort).
  res.on('close', () => {
    if (!res.writableFinished) gone.cancel();
  });
  req.on('aborted', () => gone.cancel());
  // A client that left while its key was checked or its body read has already closed: those events are past.
  if (req.socket.destroyed || res.destroyed) gone.cancel();
  const sink: { -readonly [K in keyof ResponseSink]: ResponseSink[K] } = {
    signal: gone,
    sendJson: (body) => {
      sink.firstByteAt ??= performance.now();
      if (!res.destroyed) sendJson(res, 200, body);
    },
    setHeader: (name, value) => {
      if (!res.headersSent) res.setHeader(name, value);
    },
    limits: (window) => {
      if (!res.headersSent) writeWindow(res, limitHeaders, window);
    },
    startStream: () => {
      // The headers go out with the first event (one write fewer per stream); the service writes it at once.
      res.statusCode = 200;
      res.setHeader('content-type', 'text/event-stream; charset=utf-8');
      res.setHeader('cache-control', 'no-cache, no-transform');
      res.setHeader('x-accel-buffering', 'no');
    },
    write: (text) => {
      sink.firstByteAt ??= performance.now();
      if (res.destroyed || res.writableEnded || res.write(text)) return;
      return new Promise<void>((resolve) => {
        const stalled = setTimeout(() => res.destroy(), writeTimeoutMs);
        const done = () => {
          clearTimeout(stalled);
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    },
    end: (last) => {
      if (last) sink.firstByteAt ??= performance.now();
      if (!res.writableEnded) res.end(res.destroyed ? undefined : last);
    },
  };
  return sink;
}
