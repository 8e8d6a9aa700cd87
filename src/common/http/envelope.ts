/**
 * The response envelope (docs/architecture.md "Envelope and errors"). Controllers build it explicitly with
 * these helpers, so every route's shape is visible where the route is written (no interceptor guessing the
 * shape).
 */
export interface Pagination {
  page: number;
  limit: number;
  /** Matches counted; when `totalCapped`, the count stopped there and more exist. */
  total: number;
  pages: number;
  totalCapped: boolean;
  /** Cursor of the next page (`after=`), null on the last one. */
  next: string | null;
}

export interface Ok<T> {
  success: true;
  data: T;
  message?: string;
}

export interface Page<T> {
  success: true;
  data: T[];
  pagination: Pagination;
}

export interface Done {
  success: true;
  message: string;
}

export interface ErrorBody {
  success: false;
  error: string;
  /** Only on the 401 of a sign-in that needs its TOTP or recovery code. */
  twoFactorRequired?: true;
}

export function ok<T>(data: T, message?: string): Ok<T> {
  return message === undefined ? { success: true, data } : { success: true, data, message };
}

export function done(message: string): Done {
  return { success: true, message };
}

export function page<T>(data: T[], pagination: Pagination): Page<T> {
  return { success: true, data, pagination };
}
