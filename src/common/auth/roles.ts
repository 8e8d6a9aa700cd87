export enum Role {
  Admin = 'admin',
  User = 'user',
  Viewer = 'viewer',
}

export const ROLES = Object.values(Role);

/**
 * What a bearer route requires (docs/architecture.md "Credentials and roles"):
 * - `Read`: any role (viewer and up), for GET routes.
 * - `Write`: `user` and `admin`, for writes on tickets, wants, feedback, contacts' consent, templates,
 *   newsletters.
 * - `Admin`: `admin` only (users, apps, API keys, chat routing, GDPR delete, e-mail jobs, secret values).
 * - `SignedIn`: any role whatever the method (`/auth/refresh`, own password); the handler checks the rest.
 */
export enum Access {
  Read = 'read',
  Write = 'write',
  Admin = 'admin',
  SignedIn = 'signed-in',
}

const ALLOWED: Record<Access, readonly Role[]> = {
  [Access.Read]: [Role.Viewer, Role.User, Role.Admin],
  [Access.Write]: [Role.User, Role.Admin],
  [Access.Admin]: [Role.Admin],
  [Access.SignedIn]: [Role.Viewer, Role.User, Role.Admin],
};

export function roleMayAccess(role: Role, access: Access): boolean {
  return ALLOWED[access].includes(role);
}
