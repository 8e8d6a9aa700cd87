package dev.adminservice;

import de.bwaldvogel.mongo.backend.AbstractMongoCollection;
import java.lang.reflect.Field;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The library keeps a collection's indexes in an {@code ArrayList} that every query and write walks while a
 * {@code createIndexes} on another connection may add to it: the walk then fails with a
 * {@code ConcurrentModificationException}, whose message is null, and the client gets "Unknown error: null"
 * (seen at a service's first start: Mongoose building the indexes of {@code users} while the admin bootstrap
 * read it). A copy-on-write list gives each walk the indexes as they were when it began; indexes change only
 * when they are created or dropped, so the copies cost nothing that matters.
 */
final class ConcurrentIndexes {
  private static final Field INDEXES = indexesField();

  private ConcurrentIndexes() {}

  /** Called from a collection's constructor, before the collection is visible to another connection. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  static void install(AbstractMongoCollection<?> collection) {
    try {
      List current = (List) INDEXES.get(collection);
      INDEXES.set(collection, new CopyOnWriteArrayList<>(current));
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("Cannot replace the index list of " + collection.getFullName(), e);
    }
  }

  private static Field indexesField() {
    try {
      Field field = AbstractMongoCollection.class.getDeclaredField("indexes");
      field.setAccessible(true);
      return field;
    } catch (NoSuchFieldException e) {
      throw new IllegalStateException("mongo-java-server no longer has AbstractMongoCollection.indexes", e);
    }
  }
}
