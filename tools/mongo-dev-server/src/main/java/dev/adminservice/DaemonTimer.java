package dev.adminservice;

import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/** A task repeated in a daemon thread of its own, which never keeps the JVM alive. */
final class DaemonTimer {
  private DaemonTimer() {}

  /** Runs {@code task} every {@code periodMs}, the first time one period from now. */
  static void every(String threadName, long periodMs, Runnable task) {
    Executors.newSingleThreadScheduledExecutor(
            runnable -> {
              Thread thread = new Thread(runnable, threadName);
              thread.setDaemon(true);
              return thread;
            })
        .scheduleWithFixedDelay(task, periodMs, periodMs, TimeUnit.MILLISECONDS);
  }
}
