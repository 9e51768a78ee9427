// Virtual time for the simulator: wall time scaled by a speed-up, plus explicit jumps.
// Everything time-dependent in the simulator asks this clock, so tests can drive it by hand.

export interface SimClockOptions {
  /** Virtual epoch milliseconds at start; default: the wall clock. */
  startMs?: number;
  /** Virtual seconds per wall second; 0 freezes time (only `advance` moves it). */
  speed?: number;
  /** Wall clock source, injectable for tests. */
  wallMs?: () => number;
}

export class SimClock {
  private readonly wallMs: () => number;
  private baseVirtualMs: number;
  private baseWallMs: number;
  private speedValue: number;

  constructor(options: SimClockOptions = {}) {
    this.wallMs = options.wallMs ?? Date.now;
    this.baseWallMs = this.wallMs();
    this.baseVirtualMs = options.startMs ?? this.baseWallMs;
    this.speedValue = options.speed ?? 1;
    if (!(this.speedValue >= 0) || !Number.isFinite(this.speedValue)) {
      throw new RangeError(`clock speed: expected a finite number >= 0, got ${options.speed}`);
    }
  }

  nowMs(): number {
    return this.baseVirtualMs + (this.wallMs() - this.baseWallMs) * this.speedValue;
  }

  nowSeconds(): number {
    return this.nowMs() / 1000;
  }

  get speed(): number {
    return this.speedValue;
  }

  /** Changes the speed from now on without a jump in virtual time. */
  setSpeed(speed: number): void {
    if (!(speed >= 0) || !Number.isFinite(speed)) {
      throw new RangeError(`clock speed: expected a finite number >= 0, got ${speed}`);
    }
    this.rebase();
    this.speedValue = speed;
  }

  /** Jumps virtual time forward. */
  advance(seconds: number): void {
    if (!(seconds >= 0) || !Number.isFinite(seconds)) {
      throw new RangeError(`clock advance: expected seconds >= 0, got ${seconds}`);
    }
    this.rebase();
    this.baseVirtualMs += seconds * 1000;
  }

  private rebase(): void {
    const wall = this.wallMs();
    this.baseVirtualMs += (wall - this.baseWallMs) * this.speedValue;
    this.baseWallMs = wall;
  }
}

/** Nova's timestamp style: no zone suffix, microseconds. */
export function novaTime(ms: number): string {
  return `${new Date(Math.floor(ms)).toISOString().slice(0, 19)}.000000`;
}

/** Keystone's token timestamp style. */
export function keystoneTime(ms: number): string {
  return `${new Date(Math.floor(ms)).toISOString().slice(0, 23)}000Z`;
}
