package dev.adminservice;

import org.h2.mvstore.MVStore;

/**
 * The H2 backend ({@link IndexedH2Backend}), answering a command that writes only once its changes are
 * committed and synced to the file ({@link GroupCommit}), so a killed process loses no acknowledged write.
 *
 * <p>Every command of the wire protocol, OP_MSG or legacy, reaches {@code handleCommand}. A failed write
 * is committed too: part of a batch may have been applied, and its reply counts what was.
 */
final class DurableH2Backend extends IndexedH2Backend {
  private final GroupCommit durable;

  DurableH2Backend(MVStore store, WholeCommandCommits commits) {
    super(store, commits);
    this.durable = new GroupCommit(store, commits);
  }

  @Override
  protected void afterWrite() {
    durable.awaitDurable();
  }
}
