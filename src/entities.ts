import { Session } from './accounts/session.entity.js';
import { User } from './accounts/user.entity.js';

/** Every entity the ORM knows; listed explicitly so discovery does not depend on file globs. */
export const entities = [User, Session];
