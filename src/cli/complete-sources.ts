/** What `trade __complete SOURCE` can answer: live values read from the store and the config. */
export const LIVE_SOURCES = ['accounts', 'atm-templates', 'profiles', 'orders', 'working-orders', 'strategies', 'instruments', 'executions', 'roots'] as const;
export type LiveSource = (typeof LIVE_SOURCES)[number];
