/**
 * `trade watch` as a person runs it: the built bin as a process, printing what another process
 * (`trade price set`) changes, and ending on SIGINT with exit 0 and a clean close; on embedded,
 * against a real `trade serve` over ws and http, and against the reference double (a service
 * written from the reference alone, which sends no pong and bid ≠ ask), run in-process there
 * with a stop the test controls.
 */
import { dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runWatchOrders, runWatchPnl, runWatchQuotes } from '../../src/cli/commands/watch.js';
import type { Env } from '../../src/config/paths.js';
import { createEngine } from '../../src/engine/engine.js';
import { NetworkError } from '../../src/common/errors.js';
import { orderArgs, runBin, runCli, tempHome } from '../helpers/cli.js';
import { inProcess, until } from '../helpers/in-process.js';
import { killLongRuns, startBin } from '../helpers/long-run.js';
import { startReferenceDouble, type ReferenceDouble } from '../helpers/reference-double.js';
import { storeFile } from '../helpers/serve-process.js';
import { startServer, TOKEN, type Harness } from '../server/harness.js';

const ES = 'ES 06-26';
const NQ = 'NQ 06-26';

let home: ReturnType<typeof tempHome>;
let server: Harness | undefined;
let double: ReferenceDouble | undefined;
afterEach(async () => {
  await killLongRuns();
  await server?.close();
  await double?.close();
  server = double = undefined;
  home?.cleanup();
});

function embeddedHome(prices: Record<string, number>): Env {
  home = tempHome();
  const engine = createEngine(storeFile(home.env));
  for (const [instrument, price] of Object.entries(prices)) engine.setPrice(instrument, price);
  engine.close();
  return home.env;
}

async function remote(backend: 'ws' | 'http'): Promise<{ env: Env; storeEnv: Env; server: Harness }> {
  home = tempHome();
  server = await startServer();
  server.engine.setPrice(ES, 5000);
  const env = { ...home.env, TRADE_BACKEND: backend, TRADE_BASE_URL: server.url, TRADE_TOKEN: TOKEN };
  // `trade price set` writes the server's store: another process, the simulator's own command.
  return { env, storeEnv: { ...home.env, TRADE_HOME: dirname(server.engine.file) }, server };
}


describe('trade watch quotes, a process', () => {
  it('on embedded: the quote now, then the price another process sets; SIGINT ends it with exit 0', async () => {
    const env = embeddedHome({ [ES]: 5000 });
    const watch = startBin(['watch', 'quotes', 'ESM26'], env);
    expect(await watch.line(/^ES 06-26 {2}last 5000 {2}bid 5000 {2}ask 5000 {2}high 5000 {2}low 5000 {2}volume 0 {2}\d\d\/\d\d\/\d{4} /)).toBeTruthy();
    expect((await runBin(['price', 'set', ES, '5001.25'], env)).code).toBe(0);
    await watch.line(/^ES 06-26 {2}last 5001\.25 /, { from: 1, ms: 2_000 });
    expect(await watch.stop('SIGINT')).toEqual({ code: 0, signal: null });
    expect(watch.lines()).toHaveLength(2);
    expect(watch.stderr()).toMatch(/^Watching quotes of ES 06-26 on embedded \(.*trade\.db\)\. Ctrl-C stops\.\nStopped \(SIGINT\)\.\n$/);
  });

  it('ends with exit 0 once whoever read its stdout has gone (`| head -1`)', async () => {
    const env = embeddedHome({ [ES]: 5000 });
    const watch = startBin(['watch', 'quotes', ES], env);
    await watch.line(/^ES 06-26 /);
    watch.child.stdout!.destroy();
    expect((await runBin(['price', 'set', ES, '5001'], env)).code).toBe(0);
    expect(await watch.exited).toEqual({ code: 0, signal: null });
    expect(watch.stderr()).toMatch(/\nStopped \(stdout closed\)\.\n$/);
  });

  it('on ws against trade serve: NDJSON Quote objects, the update another process sets, and a close frame (1000) on SIGINT', async () => {
    const { env, storeEnv, server } = await remote('ws');
    const watch = startBin(['watch', 'quotes', ES, '--json'], env);
    const first = await watch.line(/^\{/);
    const { success: _success, ...quote } = (await server.get(`/v1/api/market/quote?instrument=${encodeURIComponent(ES)}`)).body as Record<string, unknown>;
    expect(first).toBe(JSON.stringify(quote));
    expect((await runBin(['price', 'set', ES, '4999.5'], storeEnv)).code).toBe(0);
    expect(JSON.parse(await watch.line(/"last":4999\.5/, { from: 1, ms: 2_000 }))).toMatchObject({ instrument: ES, last: 4999.5, low: 4999.5 });
    expect(await watch.stop('SIGINT')).toEqual({ code: 0, signal: null });
    await until('the server to see the close', () => server.logs.some((line) => / WS closed 1000$/.test(line)), 2_000);
    expect(server.logs.filter((line) => / WS subscribe /.test(line))).toHaveLength(1);
  });

  it('on ws: the server going away ends the watch with exit 4, saying the connection was lost', async () => {
    const { env, server: own } = await remote('ws');
    const watch = startBin(['watch', 'quotes', ES], env);
    await watch.line(/^ES 06-26 /);
    await own.close();
    server = undefined;
    expect(await watch.exited).toEqual({ code: 4, signal: null });
    expect(watch.stderr()).toContain('Error: The connection to 127.0.0.1:');
    expect(watch.stderr()).toContain('was lost (code 1001: Server shutting down).');
  });
});

describe('trade watch, refusals before anything is watched', () => {
  it('an instrument with no price is exit 1 naming it; a bad instrument or interval is exit 2', async () => {
    const env = embeddedHome({ [ES]: 5000 });
    const noPrice = await runCli(['watch', 'quotes', ES, NQ], env);
    expect(noPrice.code).toBe(1);
    expect(noPrice.stderr).toContain(`Error: Invalid request: instrument: no price for ${NQ}\n  Set one with \`trade price set "${NQ}" PRICE\`, then watch again.\n`);
    expect(noPrice.stdout).toBe('');
    const bad = await runCli(['watch', 'quotes', 'XYZ1!'], env);
    expect(bad).toMatchObject({ code: 2, stdout: '' });
    expect(bad.stderr).toContain("Error: Invalid request: instrument: unknown root 'XYZ' in 'XYZ1!'");
    expect(await runCli(['watch', 'pnl', '--interval', '100'], env)).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("Error: --interval must be a whole number of milliseconds from 250 to 60000, got '100'"),
    });
  });
});

describe('trade watch, in-process', () => {
  it('on embedded, a bad TRADE_TIMEOUT does not stop it: nothing there waits on a service', async () => {
    const run = inProcess({ ...embeddedHome({ [ES]: 5000 }), TRADE_TIMEOUT: 'abc' });
    const done = runWatchQuotes(run.ctx, [ES], {}, run.deps);
    await until('the first quote', () => run.lines().length === 1);
    run.stop();
    await done;
    expect(run.lines()[0]).toMatch(/^ES 06-26 {2}last 5000 /);
  });

  it('on http against trade serve: a poll a second, a line only when the quote changed', async () => {
    const { env, server } = await remote('http');
    const run = inProcess(env);
    const done = runWatchQuotes(run.ctx, [ES], {}, run.deps);
    await until('the first quote', () => run.lines().length === 1);
    server.engine.setPrice(ES, 5002);
    await until('the new quote', () => run.lines().length === 2, 3_000);
    run.stop();
    await done;
    expect(run.lines().map((l) => l.split('  ').slice(0, 2).join(' '))).toEqual([`${ES} last 5000`, `${ES} last 5002`]);
    expect(server.logs.filter((l) => l.includes('GET /v1/api/market/quote')).length).toBeLessThanOrEqual(4);
  });

  describe('on ws against the reference double', () => {
    async function start() {
      home = tempHome();
      double = await startReferenceDouble({ prices: { [ES]: 5000 } });
      return inProcess({ ...home.env, TRADE_BACKEND: 'ws', TRADE_BASE_URL: `${double.url}/v1/api`, TRADE_TOKEN: double.token, TRADE_ACCOUNT: 'Sim101' });
    }

    it('quotes: the live bid and ask, then each price set', async () => {
      const run = await start();
      const done = runWatchQuotes(run.ctx, [ES], {}, run.deps);
      await until('the first quote', () => run.lines().length === 1);
      double!.setPrice(ES, 5001);
      await until('the update', () => run.lines().length === 2);
      run.stop();
      await done;
      expect(run.lines().map((l) => l.split('  ').slice(0, 4).join(' '))).toEqual([
        `${ES} last 5000 bid 4999.75 ask 5000.25`,
        `${ES} last 5001 bid 5000.75 ask 5001.25`,
      ]);
    });

    it('pnl: pnlUpdate events as NDJSON at the interval, with the open position', async () => {
      const run = await start();
      expect((await runCli(['place', ...orderArgs({ '--instrument': ES })], run.ctx.env)).code).toBe(0);
      const done = runWatchPnl(run.ctx, { interval: '250', json: true }, run.deps);
      await until('two updates', () => run.lines().length >= 2);
      run.stop();
      await done;
      const update = JSON.parse(run.lines()[0]!) as { type: string; accounts: Array<{ account: string; positions: unknown[] }> };
      expect(update).toMatchObject({ type: 'pnlUpdate', accounts: [{ account: 'Sim101', positions: [{ instrument: ES, marketPosition: 'Long', quantity: 1 }] }] });
    });

    it('orders: the working order, then its fill when the price crosses it', async () => {
      const run = await start();
      const placed = await runCli(['place', ...orderArgs({ '--instrument': ES, '--order-type': 'LIMIT', '--limit-price': '4990' }), '--json'], run.ctx.env);
      const { orderId } = JSON.parse(placed.stdout) as { orderId: string };
      const done = runWatchOrders(run.ctx, {}, run.deps);
      await until('the working order', () => run.lines().length === 1);
      double!.setPrice(ES, 4989);
      await until('the fill', () => run.lines().length === 2, 3_000);
      run.stop();
      await done;
      expect(run.lines().map((l) => l.split('  ').slice(1))).toEqual([
        ['Sim101', orderId, `BUY 1 ${ES} LIMIT limit 4990`, 'working'],
        ['Sim101', orderId, `BUY 1 ${ES} LIMIT limit 4990`, 'filled 1 @ 4990'],
      ]);
    });

    it('orders --json over http, the body in the {success, data} envelope: each Order object as the service sent it', async () => {
      home = tempHome();
      double = await startReferenceDouble({ prices: { [ES]: 5000 }, envelope: 'data' });
      const env = { ...home.env, TRADE_BACKEND: 'http', TRADE_BASE_URL: double.url, TRADE_TOKEN: double.token, TRADE_ACCOUNT: 'Sim101' };
      const run = inProcess(env);
      expect((await runCli(['place', ...orderArgs({ '--instrument': ES, '--order-type': 'LIMIT', '--limit-price': '4990' })], env)).code).toBe(0);
      const done = runWatchOrders(run.ctx, { json: true }, run.deps);
      await until('the working order', () => run.lines().length === 1);
      run.stop();
      await done;
      const order = JSON.parse(run.lines()[0]!) as Record<string, unknown>;
      expect(Object.keys(order).slice(0, 3)).toEqual(['account', 'orderId', 'instrument']);
      expect(order).toMatchObject({ orderState: 'Working', limitPrice: 4990 });
    });

    it('a lost connection is a NetworkError (exit 4)', async () => {
      const run = await start();
      const done = runWatchQuotes(run.ctx, [ES], {}, run.deps);
      await until('the first quote', () => run.lines().length === 1);
      await double!.close();
      double = undefined;
      await expect(done).rejects.toThrow(NetworkError);
      await expect(done).rejects.toMatchObject({ exitCode: 4 });
    });
  });
});
