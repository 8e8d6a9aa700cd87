/**
 * The audience of a back-office bearer token: shared by the `auth` module, which signs and checks it, and by
 * the end-user credential, which must tell the two kinds of bearer token apart before it verifies one.
 */
export const BACK_OFFICE_AUDIENCE = 'admin-service:back-office';
