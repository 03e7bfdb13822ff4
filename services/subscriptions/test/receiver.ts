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
  behave: (body: string, index: number) => Received['answer'] = () => 'ok';
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const answer = this.behave(body, this.received.length);
      this.received.push({ headers: req.headers as Record<string, string>, body, answer });
      if (answer === 'hang') return;
      res.statusCode = answer === 'ok' ? 204 : 500;
      res.end();
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
