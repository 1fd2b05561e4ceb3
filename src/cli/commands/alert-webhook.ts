/**
 * `trade alert --webhook`: alert messages posted as they are to the live service's webhook URL
 * (config key `webhook-url`), as TradingView posts them (`text/plain`), for the options only the
 * service's webhook applies (webhook-reference.md §1). Its answer is reported as *received*,
 * never as executed (§1.3); nothing is ever sent again after a timeout or a 5xx.
 */
import { checkTransport } from '../../backends/remote.js';
import { maskWebhookUrl } from '../../config/keys.js';
import { ConfigError, IncompleteError, NetworkError, RejectedError, UsageError } from '../../common/errors.js';
import { AlertFormatError, readFields } from '../../alerts/syntax.js';
import type { CommandContext } from '../context.js';
import { type AlertOptions, hideKeys } from './alert.js';

/** The format checked here, and the key required: the service would refuse either, and nothing is sent for it. */
function checkMessages(ctx: CommandContext, messages: string[]): void {
  hideKeys(ctx, messages);
  messages.forEach((message, i) => {
    const where = messages.length > 1 ? `alert ${i + 1}: ` : '';
    let key: string | undefined;
    try {
      key = readFields(message).values.key;
    } catch (error) {
      if (error instanceof AlertFormatError) throw new UsageError(`${where}${error.code}: ${error.detail}`, { hint: 'Nothing was sent.' });
      throw error;
    }
    if (key === undefined) throw new UsageError(`${where}the message has no key=…; field: the service refuses it (401)`, { hint: 'Nothing was sent. Put your secret key in the message: key=...;' });
  });
}

export async function sendToWebhook(ctx: CommandContext, messages: string[], options: AlertOptions): Promise<void> {
  const settings = await ctx.settings();
  const url = settings.webhookUrl;
  const profile = settings.profile === 'default' ? '' : ` --profile ${settings.profile}`;
  if (!url)
    throw new ConfigError('No webhook URL is set: trade alert --webhook posts to the service\'s webhook URL.', {
      code: 'no_webhook_url',
      hint: `Set it with \`trade config set${profile} webhook-url https://…/v1/send/ID/SECRET\` (or TRADE_WEBHOOK_URL).`,
    });
  checkTransport(url, settings.insecure);
  checkMessages(ctx, messages);
  const shown = maskWebhookUrl(url);
  let failed = 0;
  let code = 0;
  for (const [i, message] of messages.entries()) {
    const where = messages.length > 1 ? `alert ${i + 1}: ` : '';
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body: message,
        signal: AbortSignal.timeout(settings.timeoutMs),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      const refused = cause === 'ECONNREFUSED' || cause === 'ENOTFOUND' || cause === 'EAI_AGAIN';
      const left = messages.length - i - 1;
      throw new NetworkError(
        refused
          ? `${where}cannot reach the webhook at ${shown} (${cause}): not sent${left ? `; the ${left} after it were not sent either` : ''}`
          : `${where}no answer from the webhook at ${shown} (${cause}): the alert may have been acted on${left ? `; the ${left} after it were not sent` : ''}`,
        {
          outcomeUnknown: !refused,
          hint: refused ? 'Check webhook-url (trade config get webhook-url) and the network.' : 'Do not send it again blindly: check trade orders and trade positions (or the service\'s Alert History) first.',
        },
      );
    }
    const text = await response.text().catch(() => '');
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // The service's reply is not documented (§1.3): text is reported as text.
    }
    if (options.json) ctx.io.out(JSON.stringify({ ...(messages.length > 1 ? { alert: i + 1 } : {}), status: response.status, received: response.ok, body }));
    if (response.ok) {
      if (!options.json) {
        ctx.io.out(ctx.io.color.green(`${where}received by the webhook (HTTP ${response.status}): ${typeof body === 'string' ? body : JSON.stringify(body)}`));
        ctx.io.out('  received is not executed: check trade orders, trade positions or the service\'s Alert History for what it did');
      }
      continue;
    }
    if (response.status >= 500) {
      const left = messages.length - i - 1;
      throw new NetworkError(`${where}the webhook answered ${response.status}: the alert may have been acted on${left ? `; the ${left} after it were not sent` : ''}`, {
        outcomeUnknown: true,
        hint: 'Do not send it again blindly: check trade orders and trade positions (or the service\'s Alert History) first.',
      });
    }
    failed++;
    const reason = typeof body === 'object' && body !== null ? String((body as { error?: unknown }).error ?? text) : text;
    if (!options.json) ctx.io.err(ctx.io.errColor.red(`${where}refused by the webhook (HTTP ${response.status}): ${reason}`));
    if (code === 0) code = response.status === 401 ? new ConfigError('').exitCode : new RejectedError('').exitCode;
  }
  if (failed > 0) throw new IncompleteError(`${failed} of ${messages.length} alert${messages.length === 1 ? '' : 's'} refused by the webhook; nothing was done for ${failed === 1 ? 'it' : 'them'}`, code);
}
