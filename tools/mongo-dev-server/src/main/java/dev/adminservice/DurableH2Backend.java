package dev.adminservice;

import de.bwaldvogel.mongo.bson.Document;
import io.netty.channel.Channel;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.h2.mvstore.MVStore;

/**
 * The H2 backend ({@link IndexedH2Backend}), answering a command that writes only once its changes are committed and synced to the
 * file ({@link GroupCommit}). The library leaves commits to the MVStore's background writer (about once a
 * second), so a killed process lost the writes it had acknowledged in its last second.
 *
 * <p>Every command of the wire protocol, OP_MSG or legacy, reaches {@link #handleCommand}. A failed write
 * is committed too: part of a batch may have been applied, and its reply counts what was.
 */
final class DurableH2Backend extends IndexedH2Backend {
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

  private final GroupCommit commits;

  DurableH2Backend(MVStore store) {
    super(store);
    this.commits = new GroupCommit(store);
  }

  @Override
  public Document handleCommand(Channel channel, String database, String command, Document query) {
    if (!writes(command, query)) return super.handleCommand(channel, database, command, query);
    try {
      return super.handleCommand(channel, database, command, query);
    } finally {
      commits.awaitDurable();
    }
  }

  private static boolean writes(String command, Document query) {
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
}
