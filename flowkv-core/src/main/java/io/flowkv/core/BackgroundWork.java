package io.flowkv.core;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads stores hand work to beside their task thread (AUR reads ahead, AAR flushes): a pool
 * per kind of work, shared by the JVM's stores, one daemon thread per core, idle threads ending
 * after 30 s. A store keeps at most one piece of work of a kind in flight and waits for it with
 * {@link #await} before it touches what that work touches.
 */
public final class BackgroundWork {
    private BackgroundWork() {}

    /** A pool whose threads are named {@code namePrefix} and a number. */
    public static ExecutorService pool(String namePrefix) {
        AtomicInteger count = new AtomicInteger();
        int threads = Math.max(1, Runtime.getRuntime().availableProcessors());
        ThreadPoolExecutor pool =
                new ThreadPoolExecutor(
                        threads,
                        threads,
                        30,
                        TimeUnit.SECONDS,
                        new LinkedBlockingQueue<>(),
                        r -> {
                            Thread t = new Thread(r, namePrefix + count.incrementAndGet());
                            t.setDaemon(true);
                            t.setContextClassLoader(BackgroundWork.class.getClassLoader());
                            return t;
                        });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    /**
     * Waits for {@code work} to end; returns what it threw, or null. Waits through interrupts (the
     * caller must not touch what the work touches before it ends) and keeps the interrupt status.
     */
    public static Throwable await(Future<?> work) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    work.get();
                    return null;
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    return e.getCause();
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
