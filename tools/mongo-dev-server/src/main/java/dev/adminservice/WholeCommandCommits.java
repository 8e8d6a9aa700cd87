package dev.adminservice;

import de.bwaldvogel.mongo.bson.Document;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;
import org.h2.mvstore.MVStore;

/**
 * Lets the store write a version to the file only between write commands, so a crash never leaves half a
 * command on disk.
 *
 * <p>The library changes a document's unique-index entries before the document (two maps of one store). A
 * commit taken between the two, by another connection's write or by the store's own background writer,
 * wrote the index without the document; a kill right after kept that version. After the restart a lookup by
 * that index missed the document (or found one that no longer had the value): a queue job whose {@code
 * lockToken} entry was lost so could be neither finished nor taken back. So the store is opened with its
 * automatic commits off, a write command holds the shared side of a lock while it changes the maps, and
 * every commit (the writes' own, the periodic one, compaction, close) takes the exclusive side.
 */
final class WholeCommandCommits {
  /** How often changes not yet committed are written, as the store's background writer did. */
  private static final long COMMIT_EVERY_MS = 1_000;

  /** Commands that change data or metadata, lower-cased (the wire protocol's names are camel-cased). */
  private static final Set<String> WRITES =
      Set.of(
          "insert",
          "update",
          "delete",
          "findandmodify",
          "create",
          "createindexes",
          "drop",
          "dropindexes",
          "dropdatabase",
          "renamecollection");

  private final MVStore store;
  private final ReadWriteLock lock = new ReentrantReadWriteLock();

  WholeCommandCommits(MVStore store) {
    this.store = store;
  }

  /** Whether a command changes the store: its changes are then made under {@link #duringWrite}. */
  static boolean writes(String command, Document query) {
    String name = command.toLowerCase(Locale.ROOT);
    if (WRITES.contains(name)) return true;
    // An aggregation whose last stage writes its result into a collection.
    return name.equals("aggregate")
        && query.get("pipeline") instanceof List<?> stages
        && stages.stream()
            .anyMatch(
                stage ->
                    stage instanceof Document d && (d.containsKey("$out") || d.containsKey("$merge")));
  }

  /** Runs a write command; no commit starts until it has made all its changes. */
  <T> T duringWrite(Supplier<T> command) {
    lock.readLock().lock();
    try {
      return command.get();
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Commits what the finished commands changed (a version on disk; synced separately). */
  void commit() {
    exclusively(store::commit);
  }

  /** Runs {@code task} (a commit, compaction, close) with no write command half done. */
  void exclusively(Runnable task) {
    lock.writeLock().lock();
    try {
      task.run();
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** Commits the changes of the last second, in a daemon thread. */
  void startPeriodicCommits() {
    DaemonTimer.every("store-commit", COMMIT_EVERY_MS, this::commitSafely);
  }

  private void commitSafely() {
    try {
      if (!store.isClosed() && store.hasUnsavedChanges()) commit();
    } catch (RuntimeException e) {
      // The changes stay in the maps; the next tick, or the next write's commit, tries again.
      System.err.println("Dev database: a periodic commit failed: " + e);
    }
  }
}
