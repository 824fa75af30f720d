export interface LeaderboardSettings {
  /** The day the ranking covers is a day in this zone. */
  timeZone: string;
  prize: string;
}

/** The `leaderboard` section of the operator file: `{timezone, prize}` (defaults: UTC, no prize). */
export function leaderboardSettings(section: { timezone?: unknown; prize?: unknown } = {}): LeaderboardSettings {
  const timeZone = typeof section.timezone === 'string' && isTimeZone(section.timezone) ? section.timezone : 'UTC';
  return { timeZone, prize: typeof section.prize === 'string' ? section.prize : '' };
}

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
