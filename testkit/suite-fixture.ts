// A fixture for a whole describe block: opened in before(), closed in after(), and read through the
// returned object, whose properties come from the opened value (reading one before the hook ran is
// a test bug and throws).
import { after, before } from 'node:test';

export function suiteFixture<T extends object>(what: string, open: () => Promise<T>, close: (value: T) => Promise<void>): T {
  let value: T | undefined;
  before(async () => {
    value = await open();
  });
  after(async () => {
    if (value !== undefined) await close(value);
  });
  return new Proxy({} as T, {
    get: (_, prop) => {
      if (value === undefined) throw new Error(`${what} is read before its before() hook ran`);
      return Reflect.get(value, prop) as unknown;
    },
  });
}
