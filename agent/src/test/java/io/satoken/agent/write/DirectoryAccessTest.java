package io.satoken.agent.write;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Who may pass through the directories of a set of token files (finding 5: they were all 0755). */
class DirectoryAccessTest {

    record Case(String name, List<FileContent> files, DirectoryAccess expected) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static FileContent file(int mode, Integer uid, Integer gid) {
        return new FileContent(new byte[0], mode, uid, gid);
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case("no files", List.of(), new DirectoryAccess(null, 0700)),
                // static mode's default: a 0600 file of the agent's own
                new Case("the writer's own file", List.of(file(0600, null, null)), new DirectoryAccess(null, 0700)),
                // PV-16, PV-17: fsUser 1000 and fsGroup 2000 give 0640 1000:2000; kubelet's 2750-style group dir
                new Case("a pod with fsUser and fsGroup", List.of(file(0640, 1000, 2000)), new DirectoryAccess(2000, 0750)),
                new Case("a pod with fsGroup only", List.of(file(0640, null, 2000)), new DirectoryAccess(2000, 0750)),
                new Case("static uid and gid, 0600", List.of(file(0600, 65534, 65534)), new DirectoryAccess(65534, 0750)),
                new Case("static root file for a group", List.of(file(0640, 0, 34)), new DirectoryAccess(34, 0750)),
                new Case("two files, one group", List.of(file(0640, null, 5), file(0600, 7, 5)),
                        new DirectoryAccess(5, 0750)),
                // no group can let these readers in: others may pass, never list
                new Case("a pod with fsUser only (0600 owned by 1000)", List.of(file(0600, 1000, null)),
                        new DirectoryAccess(null, 0701)),
                new Case("a pod without fsUser or fsGroup (PV-1's 0644)", List.of(file(0644, null, null)),
                        new DirectoryAccess(null, 0701)),
                new Case("a group file for anyone", List.of(file(0644, null, 5)), new DirectoryAccess(5, 0751)),
                new Case("two groups", List.of(file(0640, null, 5), file(0640, null, 6)),
                        new DirectoryAccess(null, 0701)),
                new Case("a group and none", List.of(file(0640, null, 5), file(0600, null, null)),
                        new DirectoryAccess(null, 0701)),
                new Case("root's file needs no way in", List.of(file(0600, 0, null)), new DirectoryAccess(null, 0700)),
                new Case("an owner who may not read", List.of(file(0040, 9, null)), new DirectoryAccess(null, 0700)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void of_letsInExactlyTheReaders(Case c) {
        assertThat(DirectoryAccess.of(c.files())).isEqualTo(c.expected());
        assertThat(c.expected().mode() & 0026).as("never writable or listable by others").isZero();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void of_neverWiderThan0751(Case c) {
        assertThat(DirectoryAccess.of(c.files()).mode() & ~0751).isZero();
    }

    @org.junit.jupiter.api.Test
    void constructor_refusesWiderModes() {
        assertThatThrownBy(() -> new DirectoryAccess(null, 0755))
                .hasMessage("mode: must be 0700 plus at most 0051, got 0755");
        assertThatThrownBy(() -> new DirectoryAccess(-1, 0750)).hasMessage("gid: must not be negative, got -1");
    }
}
