/** CPU time of the processes a bench starts (Linux `/proc`; undefined elsewhere). */
import { existsSync, readFileSync } from 'node:fs';

/** CPU seconds a process has used so far (Linux `/proc`; undefined elsewhere). */
export function cpuSecondsOf(pid: number | undefined): number | undefined {
  const stat = pid && `/proc/${pid}/stat`;
  if (!stat || !existsSync(stat)) return undefined;
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = readFileSync(stat, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** This process's child running the dev database (the JVM), to count its CPU beside the service's. */
export function devDatabasePid(): number | undefined {
  const children = `/proc/${process.pid}/task/${process.pid}/children`;
  if (!existsSync(children)) return undefined;
  return readFileSync(children, 'utf8')
    .trim()
    .split(' ')
    .map(Number)
    .find((pid) => pid && readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'java');
}
