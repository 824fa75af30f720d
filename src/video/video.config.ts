/**
 * The video runner's settings (VIDEO_* in the environment). Its own module, free of imports, so the
 * application Config can name the type without importing the video service's dependencies.
 */
export interface VideoSettings {
  /** Runner loops in this process. */
  workers: number;
  /** How often a job's upstream is polled. */
  pollMs: number;
  /** How long a claimed job stays claimed; a crashed worker's jobs are picked up after this. */
  leaseMs: number;
  /** A job not finished by then fails and its hold is released. */
  deadlineMs: number;
}
