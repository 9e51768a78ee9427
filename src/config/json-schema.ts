// The configuration schema as JSON Schema (zod's own conversion): what the reference page is
// generated from, and where an unknown key's closest known sibling is looked up.
import { z } from 'zod';
import { serviceSchema } from './schema.js';

export interface JsonSchemaNode {
  type?: string | string[];
  description?: string;
  typeLabel?: string;
  properties?: Record<string, JsonSchemaNode>;
  required?: string[];
  additionalProperties?: JsonSchemaNode | boolean;
  items?: JsonSchemaNode;
  anyOf?: JsonSchemaNode[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
}

let cached: JsonSchemaNode | undefined;

export function serviceJsonSchema(): JsonSchemaNode {
  cached ??= z.toJSONSchema(serviceSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchemaNode;
  return cached;
}

/** The object schemas a value at `path` may be (several under anyOf). */
function nodesAt(root: JsonSchemaNode, path: readonly PropertyKey[]): JsonSchemaNode[] {
  let nodes = [root];
  for (const key of path) {
    const next: JsonSchemaNode[] = [];
    for (const n of nodes.flatMap((x) => [x, ...(x.anyOf ?? [])])) {
      if (typeof key === 'number') {
        if (n.items) next.push(n.items);
      } else if (n.properties?.[String(key)]) next.push(n.properties[String(key)]!);
      else if (typeof n.additionalProperties === 'object') next.push(n.additionalProperties);
    }
    nodes = next;
  }
  return nodes.flatMap((x) => [x, ...(x.anyOf ?? [])]);
}

/** Keys allowed in the mapping at `path`. */
export function knownKeysAt(path: readonly PropertyKey[]): string[] {
  return [...new Set(nodesAt(serviceJsonSchema(), path).flatMap((n) => Object.keys(n.properties ?? {})))];
}

function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let prev = Array.from({ length: y.length + 1 }, (_, i) => i);
  for (let i = 1; i <= x.length; i++) {
    const cur = [i];
    for (let j = 1; j <= y.length; j++) {
      cur.push(Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1)));
    }
    prev = cur;
  }
  return prev[y.length]!;
}

/** The known key closest to a misspelt one, when close enough to be a likely typo. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Number.POSITIVE_INFINITY;
  for (const k of known) {
    const d = distance(key, k);
    if (d < bestD) {
      best = k;
      bestD = d;
    }
  }
  const lower = key.toLowerCase();
  const contains = known.find((k) => k.toLowerCase().includes(lower) || lower.includes(k.toLowerCase()));
  if (bestD <= Math.max(2, Math.floor(key.length / 3))) return best;
  return lower.length >= 4 ? contains : undefined;
}
