/**
 * The reference double (test/helpers/reference-double.ts) checked against the reference's own
 * examples: every request of service-reference.md §12 replayed in order, over real HTTP and
 * WebSocket, against the double with §12's preconditions, its answers compared as
 * test/server/reference-replay.test.ts compares trade serve's. The double is written from the
 * reference alone and the remote backends are tested against it: were it to misread the reference
 * as our client does, both would agree and only the examples would tell.
 *
 * The double stands for the service, and §12 shows trade serve's answers: where the reference says
 * the service answers otherwise (a decision marked "server only", or what the service documents
 * none of), the answer is checked against what the reference says of the service instead, and the
 * reference's own words for it are checked to be there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkShapes, compare, examples, REFERENCE, type Step } from '../helpers/reference-examples.js';
import { type ReferenceDouble, startReferenceDouble } from '../helpers/reference-double.js';
import { connect, type RpcClient } from '../server/harness.js';

const TOKEN = 'double-replay-token-8d2a61';
const STEPS = examples();

let double: ReferenceDouble;
let client: RpcClient;
beforeAll(async () => {
  double = await startReferenceDouble({ token: TOKEN, accounts: ['Sim101'], prices: { 'ES 06-26': 5000, 'NQ 06-26': 20000 } });
  client = await connect(double.wsUrl, { authorization: `Bearer ${TOKEN}` });
});
afterAll(async () => {
  await client.close();
  await double.close();
});

/** Where the service answers otherwise than trade serve's §12: what the reference says, and what the double must answer then. */
const SERVICE_ANSWERS: Record<string, { says: string; check: (reply: unknown, step: Step) => void | Promise<void> }> = {
  // §3.6's documented example gives the changed order a new id; §11 row 10: the client uses whatever id is returned.
  '6.0': {
    says: '| 10 | Change returns a new id? | same id; client: use whatever id is returned | 3.6 |',
    check: (reply) => {
      expect(reply).toEqual({ orderId: expect.stringMatching(/^[0-9a-f]{32}$/), success: true });
      changedId = (reply as { orderId: string }).orderId;
    },
  },
  // The old id still names the order (§1.6); the answer names it by its id now.
  '6.1': { says: '| 10 | Change returns a new id?', check: (reply) => expect(reply).toEqual({ orderId: changedId, success: true }) },
  // The quote's data source is the server's decision ("Simulated"); the service reports its feeds.
  '14.0': {
    says: '`dataSource` `{"status": "Simulated", "connectedFeeds": ["Simulated"]}`',
    check: (reply) => {
      const { dataSource, ...rest } = reply as { dataSource: unknown };
      expect(dataSource).toEqual({ status: expect.any(String), connectedFeeds: expect.arrayContaining([expect.any(String)]) });
      const shown = STEPS.find((s) => `${s.example}.${s.index}` === '14.0')!;
      const { dataSource: _, ...expected } = (shown as { expect: { body: Record<string, unknown> } }).expect.body;
      compare(rest, expected);
    },
  },
  // The pong is trade serve's alone: the service answers a ping with nothing.
  '17.2': {
    says: '| pong | `{"type": "pong"}` in answer to `ping` | [decision] (server only) |',
    check: async () => {
      // Whatever comes next after the ping is not a pong: the reply to an RPC sent after it is.
      const seen = client.messages.length;
      const reply = await client.call('after-ping', 'ListAccounts', {});
      expect(reply).toMatchObject({ id: 'after-ping' });
      expect(client.messages.slice(seen).filter((m) => (m as { type?: string }).type === 'pong')).toEqual([]);
    },
  },
};
let changedId: string | undefined;

async function http(method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: unknown }> {
  const reply = await fetch(`${double.url}${path}`, { method, headers, body });
  const text = await reply.text();
  return { status: reply.status, body: text ? JSON.parse(text) : undefined };
}

describe('§12 examples, replayed in order against the reference double', () => {
  it('reads every example but the rate limit (18)', () => {
    expect(new Set(STEPS.map((s) => s.example))).toEqual(new Set(Array.from({ length: 17 }, (_, i) => i + 1)));
    expect(STEPS).toHaveLength(33);
  });

  let wsId = 0;
  for (const step of STEPS) {
    it(`${step.example}.${step.index} ${step.text.slice(0, 110)}`, async () => {
      const differs = SERVICE_ANSWERS[`${step.example}.${step.index}`];
      if (differs) expect(REFERENCE).toContain(differs.says);
      if (step.kind === 'http') {
        const headers: Record<string, string> = step.auth ? { authorization: `Bearer ${TOKEN}` } : {};
        if (step.body !== undefined) headers['content-type'] = 'application/json';
        const reply = await http(step.method, step.path, headers, step.body);
        expect(reply.status).toBe(step.expect.status);
        if (differs) await differs.check(reply.body, step);
        else if (step.expect.body !== undefined) compare(reply.body, step.expect.body);
        checkShapes(reply.body);
      } else if (step.send.action === 'rpc') {
        const reply = await client.call(`replay-${wsId++}`, step.send.api as string, step.send.args as Record<string, unknown>);
        expect(Object.keys(reply)).toEqual(['id', 'data']);
        compare(reply.data, (step.expect as { data: unknown }).data);
        checkShapes(reply.data);
      } else if (differs) {
        client.send(step.send);
        await differs.check(undefined, step);
      } else {
        const seen = client.messages.length;
        client.send(step.send);
        compare((await client.waitFor(seen + 1))[seen], step.expect);
      }
    });
  }
});

describe('§12 example 18 against the reference double', () => {
  it('the 21st of 21 back-to-back requests is 429, with no Retry-After (the service documents none), and so is an RPC at that moment', async () => {
    expect(REFERENCE).toContain('| `Retry-After` is not documented. | — |');
    // §12 says 3/s; the double's bucket refills by the wall clock, so here a token takes 100 s to
    // come back: a slow machine cannot refill it between the 20th request and the 21st.
    const limited = await startReferenceDouble({ token: TOKEN, rateLimit: { perSecond: 0.01, burst: 20 } });
    // The WebSocket's upgrade is no request of the budget on the double: 21 requests, then the RPC.
    const ws = await connect(limited.wsUrl, { authorization: `Bearer ${TOKEN}` });
    try {
      const replies = [];
      for (let i = 0; i < 21; i++) replies.push(await fetch(`${limited.url}/v1/api/positions`, { headers: { authorization: `Bearer ${TOKEN}` } }));
      expect(replies.slice(0, 20).map((r) => r.status)).toEqual(Array(20).fill(200));
      const last = replies[20]!;
      expect({ status: last.status, body: await last.json(), retryAfter: last.headers.get('retry-after') }).toEqual({
        status: 429,
        body: { error: 'Rate limit exceeded' },
        retryAfter: null,
      });
      expect(await ws.call('w7', 'GetAllPositions', {})).toEqual({ id: 'w7', data: { error: 'Rate limit exceeded' } });
    } finally {
      await ws.close();
      await limited.close();
    }
  });
});
