import {
  PlanPreflightLimiter,
  TooManyPlanPreflightsError,
} from './planPreflightLimiter';

describe('PlanPreflightLimiter', () => {
  it('allows perMinute a user in any sixty seconds, each user apart, then frees the oldest', () => {
    let now = 1_000_000;
    const limiter = new PlanPreflightLimiter(3, () => now);
    limiter.take('user:default/ann');
    now += 10_000;
    limiter.take('user:default/ann');
    limiter.take('user:default/ann');
    let refused: unknown;
    try {
      limiter.take('user:default/ann');
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(TooManyPlanPreflightsError);
    // The oldest was taken 10 s ago: it leaves the window in 50 s.
    expect((refused as TooManyPlanPreflightsError).retryAfterSeconds).toBe(50);
    // Another user is not held by ann's pre-flights.
    expect(() => limiter.take('user:default/bob')).not.toThrow();
    now += 50_000;
    expect(() => limiter.take('user:default/ann')).not.toThrow();
    expect(() => limiter.take('user:default/ann')).toThrow(
      TooManyPlanPreflightsError,
    );
  });
});
