package io.satoken.controlplane.admission;

import java.util.Random;
import java.util.function.Supplier;

/**
 * The random part of a generated name, as Kubernetes' name generator makes it: five characters from an
 * alphabet without vowels (no accidental words) and without 0, 1 and 3 (no look-alikes).
 */
public final class VolumeNameSuffix implements Supplier<String> {

    static final String ALPHABET = "bcdfghjklmnpqrstvwxz2456789";
    static final int LENGTH = 5;

    private final Random random;

    public VolumeNameSuffix(Random random) {
        this.random = random;
    }

    @Override
    public String get() {
        char[] chars = new char[LENGTH];
        for (int i = 0; i < LENGTH; i++) {
            chars[i] = ALPHABET.charAt(random.nextInt(ALPHABET.length()));
        }
        return new String(chars);
    }
}
