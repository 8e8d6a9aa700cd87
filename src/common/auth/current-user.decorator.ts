import { callerDecorator } from './caller';
import type { Role } from './roles';

/** The signed-in back-office user, as the bearer strategy resolved it (current role from the database). */
export interface AuthUser {
  id: string;
  email: string;
  name: string;
  role: Role;
}

/** `@CurrentUser() user: AuthUser` on a bearer route. */
export const CurrentUser = callerDecorator('bearer', 'CurrentUser');
