import { describe, expect, it } from 'vitest';
import { novaTime, SimClock } from '../../src/sim/clock.js';

describe('SimClock', () => {
  it('scales wall time by its speed and adds explicit jumps', () => {
    let wall = 1_000_000;
    const c = new SimClock({ startMs: 0, speed: 10, wallMs: () => wall });
    wall += 1000;
    expect(c.nowMs()).toBe(10_000);
    c.setSpeed(0);
    wall += 5000;
    expect(c.nowMs()).toBe(10_000);
    c.advance(2.5);
    expect(c.nowMs()).toBe(12_500);
    expect(() => c.advance(-1)).toThrow(/advance/);
    expect(() => new SimClock({ speed: -1 })).toThrow(/speed/);
  });

  it('formats Nova timestamps without a zone, with microseconds', () => {
    expect(novaTime(Date.parse('2026-11-29T17:07:42.123Z'))).toBe('2026-11-29T17:07:42.000000');
  });
});
