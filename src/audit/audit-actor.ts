import type { Role } from '../common/auth/roles';

/** Who acted, when the route is not a bearer route (sign-in): the user the e-mail named, if any. */
export interface AuditActor {
  id: string;
  email: string;
  role: Role;
}

const ACTOR = Symbol('audit-actor');

/** Names the actor of a request the bearer guard did not authenticate (login), for its audit record. */
export function noteAuditActor(request: object, actor: AuditActor): void {
  (request as { [ACTOR]?: AuditActor })[ACTOR] = actor;
}

export function notedAuditActor(request: object): AuditActor | undefined {
  return (request as { [ACTOR]?: AuditActor })[ACTOR];
}
