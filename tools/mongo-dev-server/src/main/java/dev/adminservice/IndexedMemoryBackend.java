package dev.adminservice;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.Document;
import io.netty.channel.Channel;

/**
 * The in-memory backend (tests, benches), its filters narrowed by a unique index ({@link IndexedQueries}), its
 * index changes kept apart from other commands ({@link IndexListLock}).
 */
final class IndexedMemoryBackend extends MemoryBackend {
  private final IndexListLock indexLists = new IndexListLock();

  @Override
  public Document handleCommand(Channel channel, String database, String command, Document query) {
    return command.equals(IndexedQueries.SCAN_COUNTS_COMMAND)
        ? IndexedQueries.scanCounts()
        : indexLists.around(command, () -> super.handleCommand(channel, database, command, query));
  }

  @Override
  public MemoryDatabase openOrCreateDatabase(String databaseName) {
    return new MemoryDatabase(databaseName, getCursorRegistry()) {
      @Override
      protected MemoryCollection openOrCreateCollection(String name, CollectionOptions options) {
        return new Collection(this, name, options, cursorRegistry);
      }
    };
  }

  private static final class Collection extends MemoryCollection {
    Collection(MongoDatabase database, String name, CollectionOptions options, CursorRegistry cursors) {
      super(database, name, options, cursors);
    }

    @Override
    protected QueryResult queryDocuments(
        Document query, Document orderBy, int skip, int limit, int batchSize, Document projection) {
      Iterable<Integer> positions = IndexedQueries.narrowedPositions(getFullName(), getIndexes(), query);
      return positions == null
          ? super.queryDocuments(query, orderBy, skip, limit, batchSize, projection)
          : matchDocuments(query, positions, orderBy, skip, limit, batchSize, projection);
    }
  }
}
