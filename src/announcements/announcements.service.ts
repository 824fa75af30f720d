import type { ServiceDeps } from '../services.js';

/** Announcements (issue 7): filled in by its own change. */
export class AnnouncementsService {
  constructor(protected readonly deps: ServiceDeps) {}
}
