/**
 * The MCP `Alert` tool (paper and trade tiers): an alert message in the service's webhook
 * language (src/alerts/), read by the one parser and run as `trade alert` runs it, on the
 * server's guarded backend, so every order it makes is judged and journaled (source `mcp`).
 * `check: true` answers what it would send, sending nothing.
 */
import { createClientHost } from '../alerts/client-host.js';
import { AlertFailure, parseAlert } from '../alerts/message.js';
import { checkedCalls, optionNotes } from '../alerts/plan.js';
import { outcomeBody, runAlert, unsupported } from '../alerts/run.js';
import { AlertFormatError } from '../alerts/syntax.js';
import type { Backend } from '../backends/types.js';
import type { Ledger } from '../guard/ledger.js';
import { isSimAccount, type Rules } from '../guard/rules.js';
import { GuardError, UsageError, ValidationError } from '../common/errors.js';
import { randomBytes } from 'node:crypto';

export const ALERT_TOOL = 'Alert';

export const ALERT_TOOL_DESCRIPTION =
  "Run a TradingView alert message in the order service's webhook language (key=...; command=PLACE; account=Sim101; instrument=ES1!; action=BUY; qty=1; order_type=MARKET; tif=DAY; ...): its commands run as the service operations they map to, with the options trade alert applies (brackets and relative prices from the last quote, delay, cancel_after, trading windows, the kill switch as the guard's halt, the rate limit). Every order passes the guard. check: true only parses it and answers the operations it would send. The key field is optional here.";

export const ALERT_INPUT_SCHEMA = {
  type: 'object',
  properties: {
    message: { type: 'string', description: 'the alert message: name=value fields, each ending with ;' },
    check: { type: 'boolean', description: 'only parse it and answer what would be sent (default false)' },
  },
  required: ['message'],
  additionalProperties: false,
};

export interface AlertToolOptions {
  backend: Backend;
  tier: 'paper' | 'trade';
  rules: Rules;
  /** The guard's ledger (GuardedBackend.ledger). */
  ledger: () => Promise<Ledger>;
  profile: string;
}

function input(raw: unknown): { message: string; check: boolean } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new ValidationError([{ field: '', message: 'arguments must be an object' }]);
  const { message, check, ...rest } = raw as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length > 0) throw new ValidationError(extra.map((field) => ({ field, message: 'is not a known field' })));
  if (typeof message !== 'string' || message.trim() === '') throw new ValidationError([{ field: 'message', message: 'must be the alert message text' }]);
  if (check !== undefined && typeof check !== 'boolean') throw new ValidationError([{ field: 'check', message: 'must be true or false' }]);
  return { message, check: check ?? false };
}

/** Answers a call of the tool: the check, or the outcome; a refusal throws (a tool error). */
export async function callAlertTool(raw: unknown, options: AlertToolOptions): Promise<Record<string, unknown>> {
  const { message, check } = input(raw);
  let alert;
  try {
    alert = parseAlert(message);
  } catch (error) {
    if (error instanceof AlertFormatError || error instanceof AlertFailure) throw new UsageError(`${error.code}: ${error.detail}`, { hint: 'Nothing was sent.' });
    throw error;
  }
  const why = unsupported(alert, { locks: undefined, holdBracket: undefined });
  if (why) throw new UsageError(`this message cannot be applied here: ${why}`, { hint: "Nothing was sent. The service's own webhook applies it (trade alert --webhook, by a person)." });
  if (alert.kind === 'command' && options.tier === 'paper' && options.backend.name !== 'embedded') {
    const live = alert.accounts.length === 0 ? 'an alert without an account reaches every account, live ones too' : alert.accounts.filter((a) => !isSimAccount(a, options.rules)).map((a) => `${a} is not a simulation account`)[0];
    if (live) throw new GuardError(`refused by tier paper: ${live}; nothing was sent`, { code: 'tier_paper', rule: 'tier' });
  }
  if (check) {
    if (alert.kind === 'kill_switch') return { killSwitch: alert.on ? 'on' : 'off', warnings: alert.warnings, ignoredFields: alert.ignoredFields, success: true };
    return { command: alert.command, calls: checkedCalls(alert), options: optionNotes(alert), warnings: alert.warnings, ignoredFields: alert.ignoredFields, checked: true, success: true };
  }
  const host = createClientHost({ backend: options.backend, ledger: options.ledger, profile: options.profile });
  try {
    const outcome = await runAlert(alert, host, { alertId: randomBytes(16).toString('hex') });
    return { ...outcomeBody(outcome, alert.ignoredFields), success: outcome.status !== 'failed' };
  } finally {
    host.close();
  }
}
