/**
 * `/_sandbox/clock` (issue 29): the session clock of the store this server serves, read and
 * controlled by clients (`trade sandbox clock`). A replay drives it, in this process (`trade
 * serve --price-replay`) or in another one on the same store (`trade price replay`): a request
 * is written to the store's clock and the replay carries it out. A step is answered once done.
 *
 *   GET  /_sandbox/clock                    {"clock":{time, epoch, replay, paused, speed, ...}}
 *   POST /_sandbox/clock/pause | /resume
 *   POST /_sandbox/clock/speed  {"speed": 10 | "max"}
 *   POST /_sandbox/clock/step   {"records": 10} | {"time": "5m"}
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { RejectedError } from '../../common/errors.js';
import type { Engine } from '../../engine/engine.js';
import { controlClock, STEP_WAIT_MS } from '../../engine/replay-driver.js';
import { type ClockControl, clockView, parseClockSpeed, parseStep } from '../../service/session-clock.js';

const view = (engine: Engine) => clockView(engine.clockState(), Date.now());
const invalid = (reply: FastifyReply, text: string) => reply.code(400).send({ error: `Invalid request: ${text}` });

/** The control a request asks for, or why it is invalid. */
export function controlOf(action: string, body: Record<string, unknown>): ClockControl | string {
  if (action === 'pause' || action === 'resume') return { action };
  if (action === 'speed') {
    const raw = body.speed;
    if (typeof raw !== 'number' && typeof raw !== 'string') return `speed: is required: a number of times real time, or "max"`;
    const speed = parseClockSpeed(String(raw));
    return typeof speed === 'number' ? { action, speed } : `speed: must be ${speed.error}`;
  }
  const given = ['records', 'time'].filter((k) => body[k] !== undefined);
  if (given.length !== 1) return 'body: give one of records (a number of records) and time (a replayed time like "5m")';
  const raw = body[given[0]!];
  if (given[0] === 'records' && typeof raw !== 'number') return `records: must be a whole number, got ${JSON.stringify(raw)}`;
  if (given[0] === 'time' && typeof raw !== 'string') return `time: must be a replayed time like "30s", "5m" or "1h", got ${JSON.stringify(raw)}`;
  const step = parseStep(String(raw));
  if ('error' in step) return `${given[0]}: must be ${step.error}`;
  return { action: 'step', ...step };
}

export function registerClockRoutes(app: FastifyInstance, prefix: string, engine: Engine): void {
  app.get(`${prefix}clock`, async () => ({ clock: view(engine), success: true }));
  for (const action of ['pause', 'resume', 'speed', 'step'] as const) {
    app.post(`${prefix}clock/${action}`, async (request, reply) => {
      const body = request.body ?? {};
      if (typeof body !== 'object' || Array.isArray(body)) return invalid(reply, 'body: must be a JSON object');
      const control = controlOf(action, body as Record<string, unknown>);
      if (typeof control === 'string') return invalid(reply, control);
      try {
        // A step is answered once the replay has carried it out.
        const { done } = await controlClock(engine, control);
        if (!done) return reply.code(504).send({ error: `The step was not done within ${STEP_WAIT_MS / 1000} s; the replay carries it on`, clock: view(engine) });
        return { clock: view(engine), success: true };
      } catch (error) {
        if (error instanceof RejectedError && error.code === 'no_replay') return reply.code(409).send({ error: error.message });
        throw error;
      }
    });
  }
}
