package dev.adminservice;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.h2.mvstore.MVStore;

/**
 * Makes the store's changes durable before a write is answered, sharing one commit and one file sync
 * among the writes that wait at the same time (group commit).
 *
 * <p>A caller takes a ticket after its change is in the store's maps. The first caller to find no commit
 * running leads one: it notes the newest ticket, commits, syncs, and marks every ticket up to that one
 * durable. Callers arriving meanwhile wait, and the next leader covers all of them with one commit. So a
 * burst of writes costs a few syncs, not one each, and no caller is answered before a commit that started
 * after its change has reached the disk.
 */
final class GroupCommit {
  private final MVStore store;
  private final WholeCommandCommits commits;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition finished = lock.newCondition();
  private long issued;
  private long durable;
  private boolean committing;

  GroupCommit(MVStore store, WholeCommandCommits commits) {
    this.store = store;
    this.commits = commits;
  }

  /** Returns once every change made before this call is committed and synced; throws if that failed. */
  void awaitDurable() {
    lock.lock();
    try {
      long ticket = ++issued;
      while (durable < ticket) {
        if (committing) {
          finished.awaitUninterruptibly();
          continue;
        }
        committing = true;
        long covered = issued;
        RuntimeException failure = null;
        lock.unlock();
        try {
          commitAndSync();
        } catch (RuntimeException e) {
          failure = e;
        }
        lock.lock();
        committing = false;
        if (failure == null) durable = Math.max(durable, covered);
        finished.signalAll();
        if (failure != null) throw failure;
      }
    } finally {
      lock.unlock();
    }
  }

  private void commitAndSync() {
    commits.commit();
    // Another commit may have taken our change into a version still being written; this waits for the
    // store's queued file work before forcing the file to the disk.
    store.executeFilestoreOperation(store::sync);
  }
}
