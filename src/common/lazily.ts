/**
 * An object whose properties are built on first read and then kept: a command that runs one
 * operation prepares only the statements that operation uses, which shortens every start-up
 * (the engine's queries, the guard's ledger).
 */
export function lazily<T extends Record<string, () => unknown>>(factories: T): { [K in keyof T]: ReturnType<T[K]> } {
  const built = {} as { [K in keyof T]: ReturnType<T[K]> };
  for (const key of Object.keys(factories) as Array<keyof T>) {
    Object.defineProperty(built, key, {
      configurable: true,
      enumerable: true,
      get() {
        const value = factories[key]!() as ReturnType<T[typeof key]>;
        Object.defineProperty(built, key, { value, enumerable: true });
        return value;
      },
    });
  }
  return built;
}
