// The task kinds this process knows, by name. The service registers the built-in kinds; the API
// lists them and refuses a kind it does not know (or an internal follow-up kind) with 400.

import type { AnyTaskHandler } from './types.js';

export class TaskRegistry {
  private readonly handlers = new Map<string, AnyTaskHandler>();

  constructor(handlers: readonly AnyTaskHandler[] = []) {
    for (const h of handlers) this.register(h);
  }

  register(handler: AnyTaskHandler): void {
    if (this.handlers.has(handler.kind))
      throw new Error(`tasks: the kind ${handler.kind} is registered twice`);
    this.handlers.set(handler.kind, handler);
  }

  get(kind: string): AnyTaskHandler | undefined {
    return this.handlers.get(kind);
  }

  /** Kinds an operator may request (not the internal follow-ups), sorted. */
  requestable(): AnyTaskHandler[] {
    return [...this.handlers.values()]
      .filter((h) => h.internal !== true)
      .sort((a, b) => (a.kind < b.kind ? -1 : 1));
  }

  kinds(): string[] {
    return [...this.handlers.keys()].sort();
  }
}
