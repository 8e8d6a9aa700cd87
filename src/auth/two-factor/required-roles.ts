import type { Role } from '../../common/auth/roles';

/** The roles of TWO_FACTOR_REQUIRED_ROLES (`admin,user`), validated at start-up (src/auth/auth.config.ts). */
export function requiredRoles(value: string | undefined): ReadonlySet<Role> {
  return new Set(
    (value ?? '')
      .split(',')
      .map((role) => role.trim())
      .filter(Boolean) as Role[],
  );
}
