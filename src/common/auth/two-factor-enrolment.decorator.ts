import { SetMetadata } from '@nestjs/common';

export const TWO_FACTOR_ENROLMENT = 'auth:two-factor-enrolment';

/**
 * A route a user may call while their role requires two-factor sign-in they have not set up yet
 * (TWO_FACTOR_REQUIRED_ROLES): the enrolment itself, `/auth/me` and signing out. Every other route is 403.
 */
export const TwoFactorEnrolment = () => SetMetadata(TWO_FACTOR_ENROLMENT, true);
