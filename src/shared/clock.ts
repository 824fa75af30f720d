/** Time comes from here so tests can reason about it; production uses the wall clock. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
