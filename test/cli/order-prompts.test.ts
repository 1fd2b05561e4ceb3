/** The order prompt flow against a scripted prompter: which questions, with which defaults. */
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backends/types.js';
import type { CommandContext } from '../../src/cli/context.js';
import { createIo, type InputStream } from '../../src/cli/io.js';
import { confirmOrder, promptDraft, promptMode, summaryLine } from '../../src/cli/order-prompts.js';
import type { ConfirmQuestion, Prompter, SelectQuestion, TextQuestion } from '../../src/cli/prompts.js';
import { CancelledError, UsageError } from '../../src/common/errors.js';
import { parseOrder } from '../../src/service/order.js';
import { CONTRACT_ROOTS } from '../../src/service/contracts.js';

const ROOTS = CONTRACT_ROOTS.join(', ');

type Asked = { kind: 'text' | 'select' | 'confirm' | 'secret'; message: string; default?: unknown; refused?: Record<string, string | undefined> };

/** Answers by question (the message up to any bracket); records every question with its default. */
function scripted(answers: Record<string, string | boolean>, probes: string[] = []) {
  const asked: Asked[] = [];
  const answer = (message: string) => {
    const key = Object.keys(answers).find((k) => message.startsWith(k));
    if (key === undefined) throw new Error(`unexpected question: ${message}`);
    return answers[key]!;
  };
  const prompter: Prompter = {
    async text(q: TextQuestion) {
      // What the schema says about a few typed values, as the person would see it.
      const refused = Object.fromEntries(probes.map((p) => [p, q.validate?.(p)]));
      asked.push({ kind: 'text', message: q.message, default: q.default, refused });
      return String(answer(q.message));
    },
    async select<T extends string>(q: SelectQuestion<T>) {
      asked.push({ kind: 'select', message: q.message, default: q.default });
      return answer(q.message) as T;
    },
    async confirm(q: ConfirmQuestion) {
      asked.push({ kind: 'confirm', message: q.message, default: q.default });
      return answer(q.message) as boolean;
    },
    async secret(q: { message: string }) {
      asked.push({ kind: 'secret', message: q.message });
      return String(answer(q.message));
    },
  };
  return { prompter, asked };
}

/** Streams that say whether they are terminals; stderr is kept. */
const terminalIo = (stdinTTY: boolean, stderrTTY: boolean) => {
  let text = '';
  const stdin = { isTTY: stdinTTY } as InputStream;
  const stderr = { isTTY: stderrTTY, write: (s: string) => (text += s) };
  return { io: createIo({ stdin, stdout: { write: () => true }, stderr }, { NO_COLOR: '1' }), stderr: () => text };
};

describe('promptMode', () => {
  const tty = terminalIo(true, true).io;
  it('asks only at a terminal, only when something is missing, never with --no-input', () => {
    expect(promptMode(tty, {}, 2)).toBe('fill');
    expect(promptMode(tty, {}, 0)).toBe('none');
    expect(promptMode(tty, { input: false }, 2)).toBe('none');
    expect(promptMode(terminalIo(false, true).io, {}, 2)).toBe('none');
    expect(promptMode(terminalIo(true, false).io, {}, 2)).toBe('none');
    expect(promptMode(tty, { interactive: true }, 0)).toBe('review');
  });

  it('refuses -i without a terminal and -i with --no-input', () => {
    expect(() => promptMode(terminalIo(false, true).io, { interactive: true }, 0)).toThrow(UsageError);
    expect(() => promptMode(terminalIo(true, false).io, { interactive: true }, 0)).toThrow(
      '--interactive needs a terminal: stdin and stderr must both be terminals',
    );
    expect(() => promptMode(tty, { interactive: true, input: false }, 0)).toThrow(/contradict/);
  });
});

describe('promptDraft', () => {
  it('without an account list asks for the account by name, the configured default offered; never the optional fields', async () => {
    const { prompter, asked } = scripted(
      { Account: 'Live7', Instrument: 'es 09-25', Action: 'SELL', Quantity: '2', 'Order type': 'STOPLIMIT', 'Limit price': '4400.5', 'Stop price': '4401', 'Time in force': 'GTC' },
      ['', ' x', '0'],
    );
    const draft = await promptDraft(prompter, {}, { review: false, defaultAccount: 'Live7' });
    expect(parseOrder(draft)).toEqual({
      account: 'Live7', instrument: 'ES 09-25', action: 'SELL', quantity: 2, orderType: 'STOPLIMIT',
      limitPrice: 4400.5, stopPrice: 4401, timeInForce: 'GTC',
    });
    expect(asked.map((a) => [a.kind, a.message, a.default])).toEqual([
      ['text', 'Account', 'Live7'],
      ['text', 'Instrument (e.g. ES 09-25)', undefined],
      ['select', 'Action', undefined],
      ['text', 'Quantity (contracts)', undefined],
      ['select', 'Order type', 'MARKET'],
      ['text', 'Limit price', undefined],
      ['text', 'Stop price', undefined],
      ['select', 'Time in force', undefined],
    ]);
    // Each typed answer is checked by the schema, in its words, as it is given.
    expect(asked.filter((a) => a.kind === 'text').map((a) => a.refused)).toEqual([
      { '': 'is required', ' x': 'must not start or end with spaces', '0': undefined },
      { '': 'is required', ' x': `unknown root 'X' in ' x'; known roots: ${ROOTS}`, '0': `unknown root '0' in '0'; known roots: ${ROOTS}` },
      { '': 'is required', ' x': "must be a whole number, got ' x'", '0': 'must be at least 1, got 0' },
      { '': 'is required for STOPLIMIT orders', ' x': "must be a positive number, got ' x'", '0': 'must be a positive number, got 0' },
      { '': 'is required for STOPLIMIT orders', ' x': "must be a positive number, got ' x'", '0': 'must be a positive number, got 0' },
    ]);
  });

  it('asks nothing of a draft whose required fields are all there, the account from the config included', async () => {
    const { prompter, asked } = scripted({});
    const given = { account: 'Live7', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' };
    expect(await promptDraft(prompter, given, { review: false, defaultAccount: 'Live7', accounts: ['Live7'], templates: ['Scalp'] })).toEqual(given);
    expect(asked).toEqual([]);
  });

  it('reviewing without a template list asks the ATM strategy as text, checked as it is typed; Enter skips', async () => {
    const { prompter, asked } = scripted({ Account: 'Live7', Instrument: 'ES 09-25', Action: 'BUY', Quantity: '1', 'Order type': 'MARKET', 'Time in force': 'DAY', OCO: '', ATM: 'Runner' }, ['', ' x', 'x'.repeat(65)]);
    const draft = await promptDraft(prompter, {}, { review: true });
    expect(draft.strategy).toBe('Runner');
    expect(draft).not.toHaveProperty('ocoId');
    expect(asked.slice(-2)).toEqual([
      { kind: 'text', message: 'OCO group id (Enter skips)', default: undefined, refused: { '': undefined, ' x': 'must not start or end with spaces', ['x'.repeat(65)]: 'must be at most 64 characters' } },
      { kind: 'text', message: 'ATM strategy (Enter skips)', default: undefined, refused: { '': undefined, ' x': 'must not start or end with spaces', ['x'.repeat(65)]: 'must be at most 64 characters' } },
    ]);
  });

  it("reviewing with the store's templates offers them as a list, the flag's one chosen in any case; (none) drops it", async () => {
    const answers = { Account: 'Sim101', Instrument: 'ES 09-25', Action: 'BUY', Quantity: '1', 'Order type': 'MARKET', 'Time in force': 'DAY', OCO: '' };
    const flags = { strategy: 'scalp' };
    const picked = scripted({ ...answers, ATM: 'Scalp' });
    expect((await promptDraft(picked.prompter, flags, { review: true, templates: ['Runner', 'Scalp'] })).strategy).toBe('Scalp');
    expect(picked.asked.at(-1)).toEqual({ kind: 'select', message: 'ATM strategy', default: 'Scalp' });
    const none = scripted({ ...answers, ATM: '' });
    expect(await promptDraft(none.prompter, flags, { review: true, templates: ['Runner', 'Scalp'] })).not.toHaveProperty('strategy');
    // An empty store has nothing to pick: no question.
    const empty = scripted(answers);
    expect(await promptDraft(empty.prompter, {}, { review: true, templates: [] })).not.toHaveProperty('strategy');
    expect(empty.asked.map((a) => a.message)).not.toContain('ATM strategy');
  });

  it('reviewing (-i) asks every field with the flags as defaults', async () => {
    const { prompter, asked } = scripted({ Account: 'Sim101', Instrument: 'ES 09-25', Action: 'BUY', Quantity: '1', 'Order type': 'LIMIT', 'Limit price': '4500', 'Time in force': 'DAY', OCO: 'g1', ATM: '' });
    const flags = { account: 'sim101', instrument: 'ES 09-25', action: 'buy', quantity: 1, orderType: 'limit', limitPrice: 4500, timeInForce: 'day', ocoId: 'g1', strategy: 'S' };
    const draft = await promptDraft(prompter, flags, { review: true, accounts: ['Sim101', 'Sim102'] });
    expect(asked.map((a) => a.default)).toEqual(['Sim101', 'ES 09-25', 'BUY', '1', 'LIMIT', '4500', 'DAY', 'g1', 'S']);
    expect(draft).toEqual({ account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'LIMIT', limitPrice: 4500, timeInForce: 'DAY', ocoId: 'g1' });
  });
});

describe('confirmOrder', () => {
  const order = parseOrder({ account: 'Live7', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' });
  const backend = (name: Backend['name'], label: string) => ({ name, label }) as Backend;

  it('defaults to No on a remote backend, and names its host in the summary', async () => {
    const { io, stderr } = terminalIo(true, true);
    const { prompter, asked } = scripted({ 'Send this order?': false });
    const attempt = confirmOrder({ io } as CommandContext, prompter, 'place', order, backend('http', 'http (trade.example.com:443)'));
    await expect(attempt).rejects.toThrow(new CancelledError());
    expect(stderr()).toBe('Place: BUY 1 ES 09-25 MARKET DAY · account Live7 · http (trade.example.com:443)\n');
    expect(asked).toEqual([{ kind: 'confirm', message: 'Send this order?', default: false }]);
  });

  it('defaults to Yes on the embedded simulation', async () => {
    const { prompter, asked } = scripted({ 'Close the position': true });
    await confirmOrder({ io: terminalIo(true, true).io } as CommandContext, prompter, 'reverse', order, backend('embedded', 'embedded (/x/trade.db)'));
    expect(asked).toEqual([{ kind: 'confirm', message: 'Close the position and send this order?', default: true }]);
  });

  it('says what a reverse does in one line', () => {
    expect(summaryLine('reverse', order, 'ws (h:1)')).toBe('Reverse: close ES 09-25, then BUY 1 ES 09-25 MARKET DAY · account Live7 · ws (h:1)');
  });
});
