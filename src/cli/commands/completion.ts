import type { Command } from 'commander';
import { UsageError } from '../../common/errors.js';
import { completionScript, SHELLS, type Shell } from '../completion.js';
import type { CommandContext } from '../context.js';

export function runCompletion(ctx: CommandContext, shell: string, program: Command): void {
  if (!(SHELLS as readonly string[]).includes(shell))
    throw new UsageError(`Unknown shell '${shell}': completion is available for ${SHELLS.join(', ')}`);
  ctx.io.stdout.write(completionScript(program, shell as Shell));
}
