package dev.adminservice;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.h2.H2Collection;
import de.bwaldvogel.mongo.backend.h2.H2Database;
import de.bwaldvogel.mongo.bson.Document;
import io.netty.channel.Channel;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;

/**
 * The H2 file backend (local runs), its filters narrowed by a unique index ({@link IndexedQueries}), its
 * index changes kept apart from other commands ({@link IndexListLock}), its file written only between write
 * commands ({@link WholeCommandCommits}). A
 * collection keeps the library's map names ({@code databases.<db>.<name>}, {@code meta.<db>.<name>}), so a
 * data file written before opens as it was.
 */
class IndexedH2Backend extends H2Backend {
  private final WholeCommandCommits commits;
  private final IndexListLock indexLists = new IndexListLock();

  IndexedH2Backend(MVStore store, WholeCommandCommits commits) {
    super(store);
    this.commits = commits;
  }

  @Override
  public Document handleCommand(Channel channel, String database, String command, Document query) {
    if (command.equals(IndexedQueries.SCAN_COUNTS_COMMAND)) return IndexedQueries.scanCounts();
    if (!WholeCommandCommits.writes(command, query)) {
      return indexLists.around(command, () -> super.handleCommand(channel, database, command, query));
    }
    try {
      // The index lock is the outer one, and is let go before afterWrite waits for the disk.
      return indexLists.around(
          command,
          () -> commits.duringWrite(() -> super.handleCommand(channel, database, command, query)));
    } finally {
      afterWrite();
    }
  }

  /** Runs after each write command, failed or not, once its changes are made (none here). */
  protected void afterWrite() {}

  /** Closing commits the store: not in the middle of a command still running on another thread. */
  @Override
  public void close() {
    commits.exclusively(super::close);
  }

  /**
   * Also called from the library's constructor, for each database the file already holds: before a field of
   * this class could be set, so the store is read from the library's own.
   */
  @Override
  protected MongoDatabase openOrCreateDatabase(String databaseName) {
    MVStore store = getMvStore();
    return new H2Database(databaseName, store, getCursorRegistry()) {
      @Override
      protected MongoCollection<Object> openOrCreateCollection(String name, CollectionOptions options) {
        String namespace = getFullCollectionNamespace(name);
        MVMap<Object, Document> data = store.openMap("databases." + namespace);
        MVMap<String, Object> meta = store.openMap("meta." + namespace);
        return new Collection(this, name, options, data, meta, cursorRegistry);
      }
    };
  }

  private static final class Collection extends H2Collection {
    Collection(
        MongoDatabase database,
        String name,
        CollectionOptions options,
        MVMap<Object, Document> data,
        MVMap<String, Object> meta,
        CursorRegistry cursors) {
      super(database, name, options, data, meta, cursors);
    }

    @Override
    protected QueryResult queryDocuments(
        Document query, Document orderBy, int skip, int limit, int batchSize, Document projection) {
      Iterable<Object> positions = IndexedQueries.narrowedPositions(getFullName(), getIndexes(), query);
      return positions == null
          ? super.queryDocuments(query, orderBy, skip, limit, batchSize, projection)
          : matchDocuments(query, positions, orderBy, skip, limit, batchSize, projection);
    }
  }
}
