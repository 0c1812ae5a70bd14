package io.satoken.controlplane.webhook;

import io.satoken.controlplane.admission.view.InvalidReviewException;
import io.satoken.controlplane.bench.WebhookLoad;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * How much memory a read review keeps (BENCHMARKS.md, "Admission review memory"): each body is read with
 * {@link AdmissionReviews#read(byte[], String[])}, the webhook's first step, and {@code copies} results are held at
 * once; the heap after full collections, less the heap before, divided by the copies, is what one review keeps. Only
 * the public read is called, so the same driver runs against earlier code (its file copied into that tree).
 *
 * <p>Then {@code at-once} reads of the nested-lists body are held together, as that many concurrent reviews would
 * hold them, and the driver says whether they fit in the heap it was given ({@code -Xmx}).
 *
 * <pre>
 * mvn -B -q -pl controlplane -am test-compile dependency:build-classpath -Dmdep.outputFile=/tmp/cp.txt \
 *   -Dmdep.includeScope=test
 * java -Xmx384m -XX:+UseSerialGC \
 *   -cp controlplane/target/test-classes:controlplane/target/classes:$(cat /tmp/cp.txt) \
 *   io.satoken.controlplane.webhook.ReviewMemory 4
 * </pre>
 */
public final class ReviewMemory {

    static final String HEAD = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
            + "\"uid\":\"u-1\",\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"
            + "\"operation\":\"CREATE\",\"namespace\":\"ns\",\"name\":\"p\",\"userInfo\":{\"username\":\"alice\"},"
            + "\"object\":";
    static final int SEVEN_MIB = 7 * 1024 * 1024;

    private ReviewMemory() {
    }

    /** A review whose pod holds, at {@code where}, a list of empty lists making the body 7 MiB. */
    public static byte[] nestedLists(String where) {
        String[] parts = where.split("\\$", -1);
        StringBuilder body = new StringBuilder(SEVEN_MIB).append(HEAD).append(parts[0]).append('[');
        int tail = parts[1].length() + 5; // "[]]", the rest of the object, "}}"
        while (body.length() + 3 + tail <= SEVEN_MIB) {
            body.append("[],");
        }
        body.append("[]]").append(parts[1]).append("}}");
        return body.toString().getBytes(StandardCharsets.US_ASCII);
    }

    /** A review whose pod has {@code n} containers of a name and an image. */
    public static byte[] containers(int n) {
        return (HEAD + pod(n) + "}}").getBytes(StandardCharsets.US_ASCII);
    }

    /** A pod with {@code containers} containers of a name and an image. */
    public static String pod(int containers) {
        StringBuilder list = new StringBuilder();
        for (int i = 0; i < containers; i++) {
            list.append(i == 0 ? "" : ",").append("{\"name\":\"c").append(i).append("\",\"image\":\"i\"}");
        }
        return "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},"
                + "\"spec\":{\"containers\":[" + list + "]}}";
    }

    /** A review whose pod has {@code n} environment variables, each {@code {"name":"VAR_00001","value":"value"}}. */
    static byte[] env(int n) {
        StringBuilder env = new StringBuilder();
        for (int i = 0; i < n; i++) {
            env.append(i == 0 ? "" : ",").append(String.format("{\"name\":\"VAR_%05d\",\"value\":\"value\"}", i));
        }
        return (HEAD + "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\","
                + "\"image\":\"i\",\"env\":[" + env + "]}]}}}}").getBytes(StandardCharsets.US_ASCII);
    }

    record Body(String name, byte[] bytes, int copies) {
    }

    public static void main(String[] args) throws Exception {
        int atOnce = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        List<Body> bodies = List.of(
                new Body("Deployment pod (WebhookLoad)",
                        WebhookLoad.admissionReview("0f3c2a9e-5b1d-4e77-8a2c-6d4e1f9b7c30", "orders")
                                .getBytes(StandardCharsets.UTF_8), 2000),
                new Body("1,000 containers", containers(1000), 200),
                new Body("2,000 env variables", env(2000), 200),
                new Body("nested lists in spec.affinity (no rule reads it)",
                        nestedLists("{\"kind\":\"Pod\",\"spec\":{\"affinity\":$}}"), 1),
                new Body("nested lists in spec.volumes[0].csi (kept whole)",
                        nestedLists("{\"kind\":\"Pod\",\"spec\":{\"volumes\":[{\"name\":\"v\",\"csi\":{\"x\":$}}]}}"), 2),
                new Body("empty containers in spec.containers",
                        containersFlood(), 1));
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        System.out.printf("java %s, max heap %d MiB%n", System.getProperty("java.version"),
                Runtime.getRuntime().maxMemory() >> 20);
        System.out.println("| body | body bytes | kept per review (bytes) | kept / body | counted by the reader |");
        System.out.println("|---|---|---|---|---|");
        for (Body body : bodies) {
            Object[] held = new Object[body.copies()];
            String outcome = null;
            long before = used(memory);
            try {
                for (int i = 0; i < held.length; i++) {
                    held[i] = AdmissionReviews.read(body.bytes(), new String[1]);
                }
            } catch (InvalidReviewException e) {
                outcome = "refused (400): " + e.getMessage().replaceAll("\\(at most.*", "…");
            }
            long after = used(memory);
            long perReview = (after - before) / held.length;
            System.out.printf("| %s | %,d | %s | %s | %s |%n", body.name(), body.bytes().length,
                    outcome != null ? outcome : String.format("%,d", perReview),
                    outcome != null ? "" : String.format("%.2f", perReview / (double) body.bytes().length),
                    counted(body.bytes()));
            held = null;
        }
        byte[] attack = nestedLists("{\"kind\":\"Pod\",\"spec\":{\"affinity\":$}}");
        List<Object> together = new ArrayList<>();
        try {
            for (int i = 0; i < atOnce; i++) {
                together.add(AdmissionReviews.read(attack, new String[1]));
            }
            System.out.printf("%d nested-lists reviews held at once: fit, heap used %d MiB%n", atOnce,
                    used(memory) >> 20);
        } catch (OutOfMemoryError | InvalidReviewException e) {
            // earlier code's Gson reported running out of heap as a parse error
            int fitted = together.size();
            together.clear();
            System.out.printf("%d nested-lists reviews held at once: out of heap after %d (%s)%n", atOnce, fitted, e);
        }
    }

    /** A review whose pod's containers are 7 MiB of empty objects: a list the rules read, of nothing. */
    static byte[] containersFlood() {
        String lists = new String(nestedLists("{\"kind\":\"Pod\",\"spec\":{\"containers\":$}}"),
                StandardCharsets.US_ASCII);
        return lists.replace("[],", "{},").replace("[]]", "{}]").getBytes(StandardCharsets.US_ASCII);
    }

    private static long used(MemoryMXBean memory) throws InterruptedException {
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return memory.getHeapMemoryUsage().getUsed();
    }

    /** The reader's own count of what it keeps, where there is a reader that counts (not in earlier code). */
    private static String counted(byte[] body) {
        try {
            Class<?> reader = Class.forName("io.satoken.controlplane.webhook.ReviewReader");
            Class<?> charge = Class.forName("io.satoken.controlplane.webhook.ReviewReader$Charge");
            Method read = reader.getDeclaredMethod("read", byte[].class, charge);
            read.setAccessible(true);
            Object none = charge.getField("NONE").get(null);
            Object result = read.invoke(null, body, none);
            Method retained = result.getClass().getDeclaredMethod("retainedBytes");
            retained.setAccessible(true);
            return String.format("%,d", (long) retained.invoke(result));
        } catch (ClassNotFoundException e) {
            return "(no reader that counts)";
        } catch (java.lang.reflect.InvocationTargetException e) {
            return "refused";
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }
}
