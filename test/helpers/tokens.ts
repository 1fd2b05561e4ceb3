/**
 * Tokens the suite hands to the CLI and to `trade serve`. None may ever be printed:
 * test/secrets.scan.ts looks for each of them (and for every token a run got through its
 * environment or stdin) in the output of every CLI run of the suite.
 */

/** The token of the in-process `trade serve` of test/server/harness.ts. */
export const HARNESS_TOKEN = 'test-token-0123456789abcdef';
/** The token test/cli/config.test.ts logs in with. */
export const CONFIG_TOKEN = 'secret-token-0123456789-abcdef';
/** The tokens of test/cli/secrets.test.ts: the server's, and a wrong one a client sends. */
export const SERVE_SECRET = 'sEcReT-serve-token-7f3a9c1e5b';
export const WRONG_SECRET = 'wRoNg-client-token-42d8e6a0c3';

export const SUITE_TOKENS = [HARNESS_TOKEN, CONFIG_TOKEN, SERVE_SECRET, WRONG_SECRET];
