import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';

/**
 * Benchmarks only (`BENCH_COUNT_COMMANDS=1`): the database commands this process sent, for the benchmark
 * that started it to divide by the requests it made (bench/http-bench.ts). Reported over the IPC channel
 * of a process forked with one, never over HTTP: no route exists for it, and without the variable (or
 * without a parent listening on IPC) nothing is counted or answered.
 */
export const COUNT_COMMANDS_VARIABLE = 'BENCH_COUNT_COMMANDS';
/** What the benchmark sends, and the type of the answer `{ type, commands }`. */
export const COMMAND_COUNT_MESSAGE = 'db-command-count';

export const countingCommands = (env: NodeJS.ProcessEnv = process.env) =>
  env[COUNT_COMMANDS_VARIABLE] === '1';

@Injectable()
export class CommandCountReport implements OnApplicationBootstrap {
  private commands = 0;

  constructor(@InjectConnection() private readonly connection: Connection) {}

  onApplicationBootstrap(): void {
    if (!countingCommands() || !process.send) return;
    // The connection was opened with `monitorCommands` (DatabaseModule): every command starts an event.
    this.connection.getClient().on('commandStarted', () => (this.commands += 1));
    process.on('message', (message: unknown) => {
      if (message === COMMAND_COUNT_MESSAGE) {
        process.send?.({ type: COMMAND_COUNT_MESSAGE, commands: this.commands });
      }
    });
  }
}
