// Counts the HTTP requests a session sends, per service, so `record` can show that its cost
// does not grow with the number of servers.

export class CallStats {
  total = 0;
  /** Requests sent again after a transient failure (included in total). */
  retries = 0;
  readonly byService = new Map<string, number>();

  count(service: string, retry: boolean): void {
    this.total++;
    if (retry) this.retries++;
    this.byService.set(service, (this.byService.get(service) ?? 0) + 1);
  }

  summary(): string {
    const parts = [...this.byService.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([s, n]) => `${s} ${n}`)
      .join(', ');
    return `${this.total} API calls (${parts || 'none'}${this.retries ? `; ${this.retries} retries` : ''})`;
  }
}
