package dev.adminservice;

import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.bson.Document;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The library answers a query from a unique index only when the filter names exactly that index's keys;
 * any other filter scans the whole collection. So {@code {_id: x, applied: {$ne: y}}} (the guard of an
 * idempotent counter update) or {@code {_id: {$in: ids}, type: 'sent'}} read every document, and a batch of
 * such updates cost time in proportion to the collection: a campaign's per-message cost grew with its size.
 * MongoDB narrows such a filter by the index and checks the rest on the documents found; this does the same.
 *
 * <p>The whole-collection scans are counted per collection and answered by the command {@code
 * {devScanCounts: 1}}, so a test can show that a filter is narrowed (the dev database has no explain).
 */
final class IndexedQueries {
  /** The command that answers the scan counts; no MongoDB command has this name. */
  static final String SCAN_COUNTS_COMMAND = "devScanCounts";

  private static final Map<String, AtomicLong> SCANS = new ConcurrentHashMap<>();

  private IndexedQueries() {}

  /**
   * The positions of the only documents that can match {@code query}, read from a unique index whose keys
   * the filter names among others (each document found is still matched against the whole filter); null
   * when the library answers the filter itself: from an index whose keys it names exactly, or by a scan
   * (counted here under {@code namespace}).
   */
  static <P> Iterable<P> narrowedPositions(String namespace, List<Index<P>> indexes, Document query) {
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
    if (narrowing == null) {
      SCANS.computeIfAbsent(namespace, name -> new AtomicLong()).incrementAndGet();
      return null;
    }
    return narrowing.getPositions(narrowingPart);
  }

  /** The answer to {@code {devScanCounts: 1}}: whole-collection scans so far, by namespace. */
  static Document scanCounts() {
    Document counts = new Document();
    SCANS.forEach((namespace, scans) -> counts.put(namespace, scans.get()));
    Document reply = new Document("scans", counts);
    Utils.markOkay(reply);
    return reply;
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
