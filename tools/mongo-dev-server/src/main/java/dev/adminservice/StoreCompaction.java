package dev.adminservice;

import org.h2.mvstore.MVStore;

/**
 * Gives the H2 file back its free space once the database goes quiet.
 *
 * <p>The MVStore only ever appends: a write puts the changed pages in a new chunk, and the space of old
 * chunks is reused only once every page in them is dead and they are older than the retention time. Under
 * a steady mix of inserts, updates and deletes that leaves the file several times the size of the data,
 * and the store's own housekeeping never shortens the file. So, when the store has not changed for one
 * check interval and is mostly free space, this moves the live chunks to the start of the file and cuts
 * the end off ({@link MVStore#compactFile}), within a time budget. Between compactions, writes find the
 * freed space inside the file instead of extending it.
 */
final class StoreCompaction {
  /** How often the store is looked at; "quiet" means no new version since the previous look. */
  private static final long CHECK_EVERY_MS = 5_000;
  /** Compact only a file at least this large with at most this share of live data: small gains wait. */
  private static final long MIN_FILE_BYTES = 8L * 1024 * 1024;
  private static final int MAX_FILL_RATE_PERCENT = 60;
  /** The most one compaction may hold the store's lock (writes queue meanwhile; reads go on). */
  private static final int MAX_COMPACT_MS = 10_000;

  private final MVStore store;
  private final WholeCommandCommits commits;
  private long lastVersion = -1;
  private long compactedVersion = -1;

  private StoreCompaction(MVStore store, WholeCommandCommits commits) {
    this.store = store;
    this.commits = commits;
  }

  /** Starts checking, in a daemon thread. */
  static void start(MVStore store, WholeCommandCommits commits) {
    StoreCompaction compaction = new StoreCompaction(store, commits);
    DaemonTimer.every("store-compaction", CHECK_EVERY_MS, compaction::checkSafely);
  }

  private void checkSafely() {
    try {
      check();
    } catch (RuntimeException e) {
      // A failed compaction leaves the store as it was; the next quiet period tries again.
      System.err.println("Dev database: compacting the file failed: " + e);
    }
  }

  private void check() {
    if (store.isClosed()) return;
    long version = store.getCurrentVersion();
    boolean quiet = version == lastVersion && !store.hasUnsavedChanges();
    lastVersion = version;
    if (!quiet || version == compactedVersion) return;
    long before = store.getFileStore().size();
    if (before < MIN_FILE_BYTES || store.getFillRate() > MAX_FILL_RATE_PERCENT) return;

    int retention = store.getRetentionTime();
    long started = System.nanoTime();
    // Compaction commits: only between write commands, as every commit (WholeCommandCommits).
    commits.exclusively(() -> store.compactFile(MAX_COMPACT_MS));
    // compactFile drops the retention time to 0 for good; old chunks are kept again from here on, so a
    // crash right after a write never finds a chunk it still needs overwritten.
    store.setRetentionTime(retention);
    compactedVersion = lastVersion = store.getCurrentVersion();
    long after = store.getFileStore().size();
    System.out.printf(
        "Dev database file compacted while idle: %d MB -> %d MB in %d ms%n",
        before >> 20, after >> 20, (System.nanoTime() - started) / 1_000_000);
    System.out.flush();
  }
}
