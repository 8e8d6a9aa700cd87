/**
 * Reading a `mongodb://` or `mongodb+srv://` connection string without connecting: its database name and its
 * hosts, for start-up messages that must name what is wrong without ever showing the password.
 */

/**
 * `scheme://[user[:password]@]hosts[/[database]][?options]`; the driver requires `/` and `@` in parts
 * escaped.
 */
const PARTS = /^mongodb(?:\+srv)?:\/\/(?:[^@/?]*@)?([^/?]*)(?:\/([^?]*))?/;

/** The database the URI names (decoded); '' when it names none, so the driver would write to `test`. */
export function databaseNameOf(uri: string): string {
  const name = PARTS.exec(uri)?.[2] ?? '';
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/** The host list (`db1:27017,db2:27017`, or the SRV name) without the credentials before it. */
export function hostsOf(uri: string): string {
  return PARTS.exec(uri)?.[1] ?? '(unreadable URI)';
}
