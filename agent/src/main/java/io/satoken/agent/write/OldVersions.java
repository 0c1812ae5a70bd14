package io.satoken.agent.write;

import java.io.IOException;

/**
 * Removes the versions a target dir no longer needs: the one just replaced, and crash leftovers (AtomicWriter's
 * step 12). Each is deleted through the open target dir, level by level, without following a link
 * ({@link OpenDir#deleteTree(String)}).
 */
final class OldVersions {

    private OldVersions() {
    }

    /** Deletes every timestamped dir in the target dir but {@code keep} (null: all), carrying on after an error. */
    static void deleteStrayDirs(OpenDir targetDir, String keep) throws IOException {
        IOException failure = null;
        for (String name : targetDir.names()) {
            if (AtomicWriter.TIMESTAMPED_DIR.matcher(name).matches() && !name.equals(keep)) {
                try {
                    targetDir.deleteTree(name);
                } catch (IOException e) {
                    failure = e;
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
