declare const __TRADE_VERSION__: string;

/** Set by the build (scripts/build.js) and by vitest.config.ts from package.json. */
export const VERSION: string = __TRADE_VERSION__;
