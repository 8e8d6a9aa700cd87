package dev.adminservice;

import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.bson.Document;
import java.util.List;

/**
 * The library answers a query from a unique index only when the filter names exactly that index's keys;
 * any other filter scans the whole collection. So {@code {_id: x, applied: {$ne: y}}} (the guard of an
 * idempotent counter update) or {@code {_id: {$in: ids}, type: 'sent'}} read every document, and a batch of
 * such updates cost time in proportion to the collection: a campaign's per-message cost grew with its size.
 * MongoDB narrows such a filter by the index and checks the rest on the documents found; this does the same.
 */
final class IndexedQueries {
  private IndexedQueries() {}

  /**
   * The positions of the only documents that can match {@code query}, read from a unique index whose keys
   * the filter names among others (each document found is still matched against the whole filter); null
   * when the library answers the filter itself (it names exactly an index's keys) or no index narrows it.
   */
  static <P> Iterable<P> narrowedPositions(List<Index<P>> indexes, Document query) {
    Index<P> narrowing = null;
    Document narrowingPart = null;
    for (Index<P> index : indexes) {
      if (index.canHandle(query)) return null;
      if (narrowing != null) continue;
      Document part = partFor(index, query);
      if (part != null && part.size() < query.size() && index.canHandle(part)) {
        narrowing = index;
        narrowingPart = part;
      }
    }
    return narrowing == null ? null : narrowing.getPositions(narrowingPart);
  }

  /** The filter's conditions on the index's keys, or null when it leaves one of them out. */
  private static Document partFor(Index<?> index, Document query) {
    Document part = new Document();
    for (IndexKey key : index.getKeys()) {
      if (!query.containsKey(key.getKey())) return null;
      part.put(key.getKey(), query.get(key.getKey()));
    }
    return part;
  }
}
