import { callerDecorator } from './caller';
import type { Role } from './roles';

/** The signed-in back-office user, as the bearer strategy resolved it (current role from the database). */
export interface AuthUser {
  id: string;
  email: string;
  name: string;
  role: Role;
  /**
   * The role must use two-factor sign-in (TWO_FACTOR_REQUIRED_ROLES) and this user has not enrolled: only
   * the enrolment routes answer (CredentialGuard).
   */
  twoFactorSetupRequired?: true;
}

/** `@CurrentUser() user: AuthUser` on a bearer route. */
export const CurrentUser = callerDecorator('bearer', 'CurrentUser');
