import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: Record<string, string>;
  body: string;
  /** How the receiver answered it. */
  answer: 'ok' | 'fail' | 'hang';
}

/**
 * A partner's receiver on loopback: answers 204, 500, or nothing at all (the sender must time
 * out), as `behave` decides per request; records every request as it came.
 */
export class TestReceiver {
  readonly received: Received[] = [];
  /** When each request arrived (ms since the epoch), in the order of `received`. */
  readonly arrivedAt: number[] = [];
  behave: (body: string, index: number) => Received['answer'] = () => 'ok';
  /** How long an answer waits (to make requests that overlap visible). */
  answerAfterMs = 0;
  /** Requests received and not answered yet, and the most there ever were at once. */
  inFlight = 0;
  maxInFlight = 0;
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const answer = this.behave(body, this.received.length);
      this.received.push({ headers: req.headers as Record<string, string>, body, answer });
      this.arrivedAt.push(Date.now());
      if (answer === 'hang') return;
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      const reply = () => {
        this.inFlight--;
        res.statusCode = answer === 'ok' ? 204 : 500;
        res.end();
      };
      if (this.answerAfterMs > 0) setTimeout(reply, this.answerAfterMs);
      else reply();
    });
  });

  static async start(): Promise<TestReceiver> {
    const receiver = new TestReceiver();
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** Events answered 2xx, in the order they arrived. */
  delivered(): Array<{ id: string; type: string; data: Record<string, unknown> }> {
    return this.received
      .filter((r) => r.answer === 'ok')
      .map((r) => JSON.parse(r.body) as { id: string; type: string; data: Record<string, unknown> });
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
