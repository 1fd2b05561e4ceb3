/**
 * import() of a package that is ES modules only (conf, @inquirer/prompts). The CLI is one
 * CommonJS file run through vm.Script (bin/trade.js), where require() cannot load such a package
 * on Node 20.18 and import() would need an experimental loader; so in that build this module is
 * replaced by one that calls the bin's own import() (scripts/build.js). Elsewhere it is import().
 */
export function importEsm<T>(specifier: string): Promise<T> {
  return import(specifier) as Promise<T>;
}
