package dev.adminservice;

import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.h2.mvstore.MVStore;

/**
 * The embedded development database: a MongoDB wire-protocol server (mongo-java-server) on 127.0.0.1.
 *
 * <p>Usage: {@code MongoDevServer [--port N] [--file PATH] [--durability commit|delayed]}. Without {@code
 * --file} the data lives in memory (tests); with it, in an H2 MVStore file (local runs), compressed and
 * compacted when idle (see {@link StoreCompaction}). With the file, a write is answered once it is committed
 * and synced ({@link DurableH2Backend}); {@code --durability delayed} answers at once and leaves the commit
 * to a periodic one ({@link WholeCommandCommits}), so a crash loses up to about a second of acknowledged
 * writes. Port 0 picks a free port. Prints the line {@code READY <connection string>} once it accepts connections, then its
 * heap limit (and the durability mode), and stops when its standard input closes, so it never outlives the
 * Node process that started it.
 */
public final class MongoDevServer {

  /** The current Node driver refuses servers below wire version 9; the library reports 8 by default. */
  private static final MongoVersion MONGO_7_0 =
      new MongoVersion() {
        @Override
        public List<Integer> getVersionArray() {
          return List.of(7, 0, 0);
        }

        @Override
        public String toVersionString() {
          return "7.0.0";
        }

        @Override
        public int getWireVersion() {
          return 21;
        }
      };

  /** The H2 page cache, in MB (H2's default too): part of the heap, so within the launcher's -Xmx. */
  private static final int STORE_CACHE_MB = 16;

  private MongoDevServer() {}

  public static void main(String[] args) throws IOException {
    int port = 0;
    String file = null;
    boolean delayed = false;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--port" -> port = Integer.parseInt(args[++i]);
        case "--file" -> file = args[++i];
        case "--durability" -> delayed = durabilityDelayed(args[++i]);
        default -> {
          System.err.println("unknown argument: " + args[i]);
          System.exit(2);
        }
      }
    }

    MongoBackend backend = openBackend(file, delayed);
    backend.version(MONGO_7_0);
    MongoServer server = new MongoServer(backend);
    server.bind("127.0.0.1", port);
    InetSocketAddress address = server.getLocalAddress();

    Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(server, backend)));
    System.out.println("READY mongodb://127.0.0.1:" + address.getPort());
    // The limit the JVM actually applies (-Xmx, or its default), so a log shows what the process may take.
    System.out.println(
        "Dev database heap limit "
            + (Runtime.getRuntime().maxMemory() >> 20)
            + " MB; data "
            + (file == null ? "in memory" : "in " + file));
    // The delayed mode is a warning: on standard error, which the service logs as one.
    if (file != null) (delayed ? System.err : System.out).println(durabilityLine(delayed));
    System.out.flush();

    waitForEndOfInput(System.in);
    System.exit(0);
  }

  private static boolean durabilityDelayed(String mode) {
    return switch (mode) {
      case "commit" -> false;
      case "delayed" -> true;
      default -> {
        System.err.println("--durability must be commit or delayed, not " + mode);
        System.exit(2);
        yield false;
      }
    };
  }

  private static String durabilityLine(boolean delayed) {
    return delayed
        ? "Dev database durability: delayed (DEV_DATABASE_DURABILITY=delayed): writes are answered before"
            + " they reach the disk; a crash loses up to about a second of them"
        : "Dev database durability: commit: each write is on disk before it is answered";
  }

  private static MongoBackend openBackend(String file, boolean delayed) throws IOException {
    if (file == null) {
      return new IndexedMemoryBackend();
    }
    Path path = Path.of(file).toAbsolutePath();
    Files.createDirectories(path.getParent());
    MVStore store =
        new MVStore.Builder()
            .fileName(path.toString())
            // LZF: BSON repeats every field name in every document; compressed chunks are about a third
            // of the bytes, so each commit writes, and the file holds, that much less.
            .compress()
            .cacheSize(STORE_CACHE_MB)
            // Commits are this server's, between write commands only (WholeCommandCommits): no background
            // writer, and no commit when the unsaved changes pass a size.
            .autoCommitDisabled()
            .autoCommitBufferSize(0)
            .open();
    WholeCommandCommits commits = new WholeCommandCommits(store);
    commits.startPeriodicCommits();
    StoreCompaction.start(store, commits);
    return delayed ? new IndexedH2Backend(store, commits) : new DurableH2Backend(store, commits);
  }

  private static void waitForEndOfInput(InputStream in) throws IOException {
    byte[] buffer = new byte[256];
    while (in.read(buffer) >= 0) {
      // Input carries no commands; reading only detects that the parent went away.
    }
  }

  private static void stop(MongoServer server, MongoBackend backend) {
    server.shutdownNow();
    // Closing the H2 backend commits and closes the MVStore file, so nothing written is lost.
    backend.close();
  }
}
