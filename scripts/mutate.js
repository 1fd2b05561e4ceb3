// npm run mutate [-- [--report-only] MODULE...]: mutation testing with Stryker over the modules where a silent
// regression costs money (docs/mutation-testing.md). Each module is one Stryker run over its own
// source files, with only the test files that exercise them in-process (a test that runs the
// built bin never sees a mutant). Runs are incremental: reports/mutation/<module>.incremental.json
// keeps each mutant's result, and the next run tests again only the mutants whose code or tests
// changed. Reports (json, html, the incremental files, summary.json) go to reports/mutation/,
// which git ignores. Not part of `npm test`.
//
// The score of a module is killed / (killed + survived + no coverage); a mutant that makes the
// tests time out counts as killed (the run caught it). Mutants judged equivalent (they change no
// behaviour any caller can see) are listed with the reason in scripts/mutation-equivalents.json;
// the summary shows each module's score as run and with those set aside. A module under the
// target (85 % as run) makes the command exit 1.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Stryker } from '@stryker-mutator/core';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const REPORTS = join(ROOT, 'reports', 'mutation');
const TARGET = 85;

/** Each module: the source it mutates and the test files that run it in-process. */
export const MODULES = {
  guard: {
    what: "the guard's rules (their checks and their text forms) and its ledger (pace and duplicate lookups, the journal)",
    mutate: ['src/guard/rules.ts', 'src/config/guard-syntax.ts', 'src/guard/ledger.ts', 'src/guard/sqlite-ledger.ts'],
    tests: [
      'test/guard/rules.test.ts',
      'test/guard/ledger.test.ts',
      'test/guard/ledger-open.test.ts',
      'test/guard/account-lock.test.ts',
      'test/guard/ledger-conformance.test.ts',
      'test/guard/sqlite-ledger.test.ts',
      'test/guard/guard.test.ts',
    ],
  },
  order: {
    what: 'the order schema and instrument resolution',
    mutate: ['src/service/order.ts', 'src/service/instruments.ts'],
    tests: ['test/service/order.test.ts', 'test/service/order-fields.test.ts', 'test/service/order-parsers.test.ts', 'test/service/order-fuzz.test.ts', 'test/service/lazy-fields.test.ts', 'test/service/instruments.test.ts'],
  },
  backends: {
    what: "the http and ws backends' retry and outcome-unknown logic",
    mutate: ['src/backends/http.ts', 'src/backends/ws.ts', 'src/backends/remote.ts'],
    tests: ['test/backends/remote.test.ts', 'test/backends/http-faults.test.ts', 'test/backends/ws-faults.test.ts', 'test/backends/ws-streams.test.ts', 'test/backends/ws-edges.test.ts', 'test/contract/operations.test.ts'],
  },
  fills: {
    what: "the engine's fills: matching, fill prices and commission, position arithmetic",
    mutate: ['src/engine/fills.ts', 'src/engine/matching.ts', 'src/engine/position.ts'],
    tests: [
      'test/engine/matching.test.ts',
      'test/engine/engine.test.ts',
      'test/engine/commission-slippage.test.ts',
      'test/engine/oco-atm.test.ts',
      'test/engine/cancel-close-expiry.test.ts',
      'test/engine/service-positions.test.ts',
      'test/engine/properties.test.ts',
      'test/engine/fills.test.ts',
    ],
  },
  alerts: {
    what: 'the alert parser (webhook-reference.md)',
    mutate: ['src/alerts/syntax.ts', 'src/alerts/message.ts'],
    tests: ['test/alerts/parser.test.ts', 'test/alerts/options.test.ts', 'test/alerts/examples.test.ts'],
  },
};

/** The mutants judged equivalent: { file, mutator, original, replacement, reason }. */
const EQUIVALENTS = JSON.parse(readFileSync(join(ROOT, 'scripts', 'mutation-equivalents.json'), 'utf8'));

/** The source text a mutant replaced, from the report's copy of the file. */
function originalText(source, location) {
  const lines = source.split('\n');
  const { start, end } = location;
  if (start.line === end.line) return lines[start.line - 1].slice(start.column - 1, end.column - 1);
  return [lines[start.line - 1].slice(start.column - 1), ...lines.slice(start.line, end.line - 1), lines[end.line - 1].slice(0, end.column - 1)].join('\n');
}

const isEquivalent = (file, mutant, original) =>
  EQUIVALENTS.some((e) => e.file === file && e.mutator === mutant.mutatorName && e.original === original && e.replacement === mutant.replacement);

async function run(name, module, reportOnly) {
  const started = Date.now();
  const jsonFile = join(REPORTS, `${name}.json`);
  // The module's test files reach vitest through its config's `include` (vitest.mutate.config.ts),
  // not through Stryker's `testFiles`: with `testFiles`, Stryker 9.6 activates a static mutant (code
  // that runs when a module loads: a table, a regular expression) after the module has loaded, so it
  // is never in effect and is reported as survived (stryker-js issues #6144, #6209).
  process.env.TRADE_MUTATE_TESTS = module.tests.join(',');
  if (!reportOnly) await new Stryker({
    testRunner: 'vitest',
    plugins: ['@stryker-mutator/vitest-runner'],
    vitest: { configFile: 'vitest.mutate.config.ts', related: false },
    mutate: module.mutate,
    coverageAnalysis: 'perTest',
    incremental: true,
    incrementalFile: join(REPORTS, `${name}.incremental.json`),
    reporters: ['json', 'html', 'progress-append-only'],
    jsonReporter: { fileName: jsonFile },
    htmlReporter: { fileName: join(REPORTS, `${name}.html`) },
    // A sandbox of its own per module, so that modules can be mutated side by side.
    tempDirName: join('.stryker-tmp', name),
    // Not copied into a sandbox: the other modules' sandboxes and the reports.
    ignorePatterns: ['/.stryker-tmp', '/reports'],
    cleanTempDir: true,
    // A busy machine (other work on 2 cores) must not turn a slow test into a "timeout" kill.
    timeoutMS: 5_000,
    logLevel: 'warn',
    fileLogLevel: 'off',
  }).runMutationTest();
  const report = JSON.parse(readFileSync(jsonFile, 'utf8'));
  const counts = { killed: 0, timeout: 0, survived: 0, noCoverage: 0, errors: 0, equivalent: 0 };
  const survivors = [];
  for (const [file, entry] of Object.entries(report.files)) {
    const path = relative(ROOT, join(ROOT, file));
    for (const mutant of entry.mutants) {
      const original = originalText(entry.source, mutant.location);
      if (mutant.status === 'Killed') counts.killed++;
      else if (mutant.status === 'Timeout') counts.timeout++;
      else if (mutant.status === 'CompileError' || mutant.status === 'RuntimeError' || mutant.status === 'Ignored') counts.errors++;
      else {
        if (mutant.status === 'Survived') counts.survived++;
        else counts.noCoverage++;
        const equivalent = isEquivalent(path, mutant, original);
        if (equivalent) counts.equivalent++;
        else survivors.push({ file: path, line: mutant.location.start.line, mutator: mutant.mutatorName, original, replacement: mutant.replacement, status: mutant.status });
      }
    }
  }
  const detected = counts.killed + counts.timeout;
  const valid = detected + counts.survived + counts.noCoverage;
  const score = valid === 0 ? 100 : (100 * detected) / valid;
  const withoutEquivalents = valid - counts.equivalent === 0 ? 100 : (100 * detected) / (valid - counts.equivalent);
  return { module: name, what: module.what, files: module.mutate, mutants: valid, ...counts, score: round(score), scoreWithoutEquivalents: round(withoutEquivalents), seconds: Math.round((Date.now() - started) / 1000), survivors };
}

const round = (n) => Math.floor(n * 100) / 100;

// --report-only: the scores again from the last reports (after scripts/mutation-equivalents.json changed), nothing run.
const reportOnly = process.argv.includes('--report-only');
const asked = process.argv.slice(2).filter((a) => a !== '--report-only');
for (const name of asked) if (!MODULES[name]) throw new Error(`no module '${name}': one of ${Object.keys(MODULES).join(', ')}`);
mkdirSync(REPORTS, { recursive: true });
const started = Date.now();
const results = [];
for (const name of asked.length ? asked : Object.keys(MODULES)) {
  console.error(`mutating ${name}: ${MODULES[name].mutate.join(', ')}`);
  results.push(await run(name, MODULES[name], reportOnly));
}
const seconds = Math.round((Date.now() - started) / 1000);
// The summary keeps the last result of every module, whichever run it came from.
const summaryFile = join(REPORTS, 'summary.json');
const previous = existsSync(summaryFile) ? JSON.parse(readFileSync(summaryFile, 'utf8')).results : [];
// Recomputed from a report: the time is the run's that made it.
if (reportOnly) for (const r of results) r.seconds = previous.find((p) => p.module === r.module)?.seconds ?? r.seconds;
const merged = [...previous.filter((p) => !results.some((r) => r.module === p.module)), ...results];
writeFileSync(summaryFile, `${JSON.stringify({ date: new Date().toISOString(), results: merged }, null, 2)}\n`);

for (const r of results)
  for (const s of r.survivors) console.log(`${r.module}: ${s.status} ${s.file}:${s.line} ${s.mutator}: ${JSON.stringify(s.original)} -> ${JSON.stringify(s.replacement)}`);
console.log('');
console.log('| module | mutants | killed | timed out | survived | no coverage | equivalent | score | without equivalents | seconds |');
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const r of results)
  console.log(`| ${r.module} | ${r.mutants} | ${r.killed} | ${r.timeout} | ${r.survived} | ${r.noCoverage} | ${r.equivalent} | ${r.score.toFixed(2)} % | ${r.scoreWithoutEquivalents.toFixed(2)} % | ${r.seconds} |`);
console.log(`\nall modules in ${Math.floor(seconds / 60)} min ${seconds % 60} s; reports in ${relative(ROOT, REPORTS)}/`);
const under = results.filter((r) => r.score < TARGET);
if (under.length) {
  console.error(`under the target of ${TARGET} %: ${under.map((r) => `${r.module} (${r.score.toFixed(2)} %)`).join(', ')}`);
  process.exitCode = 1;
}
