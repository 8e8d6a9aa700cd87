/**
 * A CPU profile of part of this process's own work (the campaign bench plays the service in-process), taken
 * with the inspector between `start` and `stop`, written as a `.cpuprofile` (open it in Chrome DevTools) and
 * summed up as the server profiles are (cpu-profile.ts): self time per package or service file, and time per
 * function with what it calls.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { summariseFunctions, summariseProfile } from './cpu-profile';

/** With `BENCH_PROFILE` set: profiles this process from `start` to `stop`; without, does nothing. */
export function inProcessProfile(): { start(): Promise<void>; stop(file: string): Promise<void> } {
  if (!process.env.BENCH_PROFILE) return { start: () => Promise.resolve(), stop: () => Promise.resolve() };
  const session = new Session();
  return {
    async start() {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 200 });
      await session.post('Profiler.start');
    },
    async stop(file) {
      const { profile } = (await session.post('Profiler.stop')) as { profile: object };
      session.disconnect();
      writeFileSync(file, JSON.stringify(profile));
      console.log(`CPU profile written to ${file}`);
      console.log('CPU time of the send by where it was spent (self time, per package or service file):');
      console.table(summariseProfile(file, 25));
      console.log('... and per function (total: with what it calls; self: in it alone):');
      console.table(summariseFunctions(file, 40));
    },
  };
}
