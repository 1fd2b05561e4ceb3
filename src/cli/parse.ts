/** Argument checks shared by commands that take positional arguments and flags. */
import { type FieldIssue, ValidationError } from '../order/errors.js';

/** Runs each parser, collecting every field issue, so one message names every bad argument. */
export function parseAll<T extends unknown[]>(parsers: { [K in keyof T]: () => T[K] }, hint: string): T {
  const issues: FieldIssue[] = [];
  const values = parsers.map((parse) => {
    try {
      return parse();
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      issues.push(...error.issues);
      return undefined;
    }
  });
  if (issues.length > 0) throw new ValidationError(issues, { hint });
  return values as T;
}
