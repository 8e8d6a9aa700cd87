import { accessSync, constants, statSync, statfsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * Linux kernel file systems (statfs magic numbers) that hold no files of ours: creating a directory there
 * fails, and in /proc Node's recursive mkdir never returns (it retries ENOENT forever), so start-up would
 * hang with no output. Root passes the access check in /sys and /proc, so it is not enough.
 */
const KERNEL_FILE_SYSTEMS: ReadonlyMap<number, string> = new Map([
  [0x9fa0, 'procfs'],
  [0x62656572, 'sysfs'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0x62656570, 'configfs'],
  [0x1cd1, 'devpts'],
  [0x6165676c, 'pstore'],
  [0xcafe4a11, 'bpf'],
  [0xde5e81e4, 'efivarfs'],
]);

/** The kernel file system `path` lies on (Linux), or undefined for storage or where it cannot be told. */
function kernelFileSystemOf(path: string): string | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    return KERNEL_FILE_SYSTEMS.get(statfsSync(path).type);
  } catch {
    return undefined;
  }
}

/** The directory itself when it exists, else its nearest existing ancestor: where creating it would start. */
function nearestExisting(path: string): string {
  for (let candidate = path; ; candidate = dirname(candidate)) {
    try {
      statSync(candidate);
      return candidate;
    } catch {
      if (dirname(candidate) === candidate) return candidate;
    }
  }
}

/**
 * Why this process could not create or write DATA_DIR (the database file, the generated secret, uploads and
 * e-mails live there), or undefined when it can. Checked without creating anything, so validating the
 * environment has no side effect: the nearest existing part of the path must be a directory this user may
 * write into.
 */
export function dataDirProblem(dataDir: string): string | undefined {
  const path = resolve(dataDir);
  const existing = nearestExisting(path);
  const cause = (() => {
    if (!statSync(existing).isDirectory()) return `${existing} is a file, not a directory (ENOTDIR)`;
    const kernel = kernelFileSystemOf(existing);
    if (kernel) return `${existing} is on a kernel file system (${kernel}) that holds no data`;
    try {
      accessSync(existing, constants.W_OK | constants.X_OK);
      return undefined;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      return code === 'EROFS'
        ? `${existing} is on a read-only file system (EROFS)`
        : `this user may not write into ${existing} (${code})`;
    }
  })();
  if (!cause) return undefined;
  return `cannot create or write ${path}: ${cause}; set DATA_DIR to a directory this user can write`;
}
