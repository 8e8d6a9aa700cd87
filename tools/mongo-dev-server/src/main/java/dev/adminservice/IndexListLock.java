package dev.adminservice;

import java.util.Locale;
import java.util.Set;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * Keeps the commands that change a collection's index list apart from every other command.
 *
 * <p>The library keeps a collection's indexes in a plain {@code ArrayList} that every query and write walks,
 * and {@code createIndexes} on another connection adds to it: the walk then threw a {@code
 * ConcurrentModificationException}, which the client saw as "Unknown error: null" (at a service's first start,
 * Mongoose builds the indexes of {@code users} while the admin bootstrap reads it). Index changes are rare, so
 * they take the exclusive side of one lock per backend and every other command the shared side; the list
 * itself, a private field of the library, is left as it is.
 */
final class IndexListLock {
  /** Commands that add or remove indexes (or whole collections with theirs), lower-cased. */
  private static final Set<String> INDEX_CHANGES =
      Set.of("createindexes", "dropindexes", "create", "drop", "dropdatabase", "renamecollection");

  private final ReadWriteLock lock = new ReentrantReadWriteLock();

  /** Runs the command: alone if it changes indexes, beside the other commands otherwise. */
  <T> T around(String command, Supplier<T> run) {
    Lock side =
        INDEX_CHANGES.contains(command.toLowerCase(Locale.ROOT)) ? lock.writeLock() : lock.readLock();
    side.lock();
    try {
      return run.get();
    } finally {
      side.unlock();
    }
  }
}
