import type { Server, ServerResponse } from 'node:http';

/** How long the gateway goes on serving once told to stop, before it closes its connections. */
export interface DrainTimings {
  /** It stops once no request has come for this long (counted from the stop at the earliest)… */
  quietMs: number;
  /** …or once it has served this long since the stop, whichever comes first. */
  maxMs: number;
  /** Once the listener is closed, how often connections that went idle are closed. */
  sweepMs: number;
}

/**
 * A second without a request: a client that picked this gateway just before it left the load
 * balancer's endpoints has sent by then, even on a loaded machine. Five seconds at most, as the
 * chart's preStop pause.
 */
export const DRAIN_TIMINGS: DrainTimings = { quietMs: 1_000, maxMs: 5_000, sweepMs: 50 };

/**
 * Stopping an HTTP server without resetting a connection. A keep-alive connection is idle between
 * two requests: closing it while the client is sending its next request on it resets that request
 * (ECONNRESET, or "other side closed"), and the client cannot know whether it was processed. So,
 * once `stop()` is called:
 * - every answer not yet begun, and every request that comes from then on, is answered with
 *   `Connection: close`: the client knows not to reuse the connection, which closes after it;
 * - the server goes on listening and serving ("lame duck") while requests still come, until none
 *   has for `quietMs` (at most `maxMs`): readiness already says 503, and the clients that chose
 *   this server before the load balancer let it go get their answer instead of a reset;
 * - only then the listener closes, with the connections that are idle, and connections are closed
 *   as they go idle, until none is left (the caller's deadline bounds the wait for long answers).
 */
export class HttpDrain {
  private stopping: Promise<void> | undefined;
  private lastRequestAt = 0;
  /** Answers in progress, to mark with `Connection: close` when the stop begins. */
  private readonly answering = new Set<ServerResponse>();

  constructor(
    private readonly server: Server,
    private readonly timings: DrainTimings = DRAIN_TIMINGS,
  ) {
    // Before the application's own listener: an answer it gives at once (a refusal) is marked too.
    server.prependListener('request', (_req, res: ServerResponse) => {
      this.lastRequestAt = performance.now();
      if (this.stopping) closeAfter(res);
      this.answering.add(res);
      res.once('close', () => this.answering.delete(res));
    });
  }

  /** Whether `stop()` was called: answers ask their clients to close the connection. */
  get draining(): boolean {
    return this.stopping !== undefined;
  }

  /** Resolves once every connection is closed (the same promise on every call). */
  stop(): Promise<void> {
    return (this.stopping ??= this.drain());
  }

  private async drain(): Promise<void> {
    const began = performance.now();
    for (const res of this.answering) closeAfter(res);
    for (;;) {
      const now = performance.now();
      const wait = Math.min(this.timings.quietMs - (now - Math.max(this.lastRequestAt, began)), this.timings.maxMs - (now - began));
      if (wait <= 0) break;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
    // Closes the listener and the connections idle now; the others close after their answer
    // (`Connection: close`), or, for an answer begun before the stop, once idle (the sweep).
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    const sweeper = setInterval(() => this.server.closeIdleConnections(), this.timings.sweepMs);
    this.server.closeIdleConnections();
    try {
      await closed;
    } finally {
      clearInterval(sweeper);
    }
  }
}

function closeAfter(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('Connection', 'close');
}
