/** The map's value for `key`, created by `make` and stored when absent. */
export function getOrCreate<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

/**
 * The record's own value for a key that came from outside (a name in a URL, a body, the cloud):
 * never one inherited from Object.prototype, as `record['constructor']` would be.
 */
export function own<V>(record: Readonly<Record<string, V>>, key: string): V | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** Stores a key from outside as an own property, even `__proto__` (which `record[key] =` takes for the prototype). */
export function setOwn<V>(record: Record<string, V>, key: string, value: V): void {
  Object.defineProperty(record, key, { value, writable: true, enumerable: true, configurable: true });
}
