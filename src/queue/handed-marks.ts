interface WaitingMark {
  token: string;
  repeatable: boolean;
  done: (held: boolean) => void;
  fail: (error: unknown) => void;
}

/**
 * Marks jobs handed in groups: a slot asks just before its job leaves, and every slot that asks while a
 * mark is being written is marked by the next write (one update per group of slots, however many; two when
 * the group mixes repeatable and other marks, which one transport never does).
 */
export class HandedMarks {
  private waiting: WaitingMark[] = [];
  private writing = false;

  constructor(private readonly write: (tokens: string[], repeatable: boolean) => Promise<Set<string>>) {}

  /** True once the job is marked handed; false when its lease was lost (it must not leave). */
  mark(token: string, repeatable: boolean): Promise<boolean> {
    return new Promise((done, fail) => {
      this.waiting.push({ token, repeatable, done, fail });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    // Lets the slots that reach this point in the same event-loop turn (their SMTP answers read in one
    // poll phase) join the first write.
    await new Promise<void>((joined) => setImmediate(joined));
    while (this.waiting.length > 0) {
      const group = this.waiting.splice(0);
      for (const repeatable of [false, true]) {
        const marks = group.filter((entry) => entry.repeatable === repeatable);
        if (marks.length > 0) await this.writeGroup(marks, repeatable);
      }
    }
    this.writing = false;
  }

  private async writeGroup(group: WaitingMark[], repeatable: boolean): Promise<void> {
    try {
      const held = await this.write(
        group.map((entry) => entry.token),
        repeatable,
      );
      for (const entry of group) entry.done(held.has(entry.token));
    } catch (error) {
      for (const entry of group) entry.fail(error);
    }
  }
}
