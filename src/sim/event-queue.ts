// A binary min-heap of timed events. Ties keep insertion order so a run is reproducible.

export interface TimedEvent {
  at: number;
  run: () => void;
}

interface Entry extends TimedEvent {
  seq: number;
}

export class EventQueue {
  private readonly heap: Entry[] = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  push(at: number, run: () => void): void {
    const e: Entry = { at, run, seq: this.seq++ };
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(e, h[p] as Entry)) break;
      h[i] = h[p] as Entry;
      i = p;
    }
    h[i] = e;
  }

  peekTime(): number | undefined {
    return this.heap[0]?.at;
  }

  /** Removes and returns the earliest event due at or before `t`. */
  popDue(t: number): TimedEvent | undefined {
    const h = this.heap;
    const top = h[0];
    if (!top || top.at > t) return undefined;
    const last = h.pop() as Entry;
    if (h.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        const cur = m === i ? last : (h[m] as Entry);
        let best = cur;
        if (l < h.length && before(h[l] as Entry, best)) {
          m = l;
          best = h[l] as Entry;
        }
        if (r < h.length && before(h[r] as Entry, best)) {
          m = r;
          best = h[r] as Entry;
        }
        if (m === i) break;
        h[i] = best;
        i = m;
      }
      h[i] = last;
    }
    return top;
  }
}

function before(a: Entry, b: Entry): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
