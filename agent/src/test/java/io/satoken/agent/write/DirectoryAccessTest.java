package io.satoken.agent.write;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Who may pass through the directories of a set of token files: every process that a file's own mode lets
 * read it, as through kubelet's 0755 directories (AW-1), and no one may list them but the writer and their
 * group. The writer here is root (uid 0, gid 0), as the CSI agent is.
 */
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
                new Case("root's file needs no way in", List.of(file(0600, 0, null)), new DirectoryAccess(null, 0700)),
                // PV-17: fsGroup 2000 alone gives 0640 root:2000; every container is in fsGroup
                new Case("a pod with fsGroup only", List.of(file(0640, null, 2000)), new DirectoryAccess(2000, 0750)),
                new Case("static root file for a group", List.of(file(0640, 0, 34)), new DirectoryAccess(34, 0750)),
                // PV-16, PV-17: fsUser 1000 and fsGroup 2000 give 0640 1000:2000. The owner reads the file
                // whether or not they are in its group, so they may pass as others too
                new Case("a pod with fsUser and fsGroup", List.of(file(0640, 1000, 2000)),
                        new DirectoryAccess(2000, 0751)),
                // a projections entry's uid and gid: user 1000 need not be in group 3000
                new Case("an owner perhaps outside its file's group", List.of(file(0640, 1000, 3000)),
                        new DirectoryAccess(3000, 0751)),
                new Case("static uid and gid, 0600", List.of(file(0600, 65534, 65534)), new DirectoryAccess(65534, 0751)),
                new Case("two files, one group", List.of(file(0640, null, 5), file(0600, 7, 5)),
                        new DirectoryAccess(5, 0751)),
                new Case("a group file for anyone", List.of(file(0644, null, 5)), new DirectoryAccess(5, 0751)),
                // PV-16, PV-18: fsUser 1000 without fsGroup gives 0600 1000:0. User 1000's primary group is 0
                // unless runAsGroup says otherwise: the group class must pass it as others are passed
                new Case("a pod with fsUser only (0600 owned by 1000)", List.of(file(0600, 1000, null)),
                        new DirectoryAccess(null, 0711)),
                // PV-1, PV-16: no fsUser nor fsGroup gives 0644 root:root, readable by every container
                new Case("a pod without fsUser or fsGroup (PV-1's 0644)", List.of(file(0644, null, null)),
                        new DirectoryAccess(null, 0711)),
                // a projections entry's mode 0640 in such a pod: kubelet's defaultMode 0640 lets group 0 read
                new Case("the writer's group may read", List.of(file(0640, null, null)), new DirectoryAccess(null, 0710)),
                new Case("an owner who may not read, the writer's group may", List.of(file(0040, 9, null)),
                        new DirectoryAccess(null, 0710)),
                new Case("a mode that lets only root read (0400)", List.of(file(0400, null, null)),
                        new DirectoryAccess(null, 0700)),
                new Case("two groups", List.of(file(0640, null, 5), file(0640, null, 6)),
                        new DirectoryAccess(null, 0711)),
                new Case("a group and none", List.of(file(0640, null, 5), file(0600, null, null)),
                        new DirectoryAccess(null, 0711)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void of_choosesTheGroupAndMode(Case c) {
        assertThat(DirectoryAccess.of(c.files())).isEqualTo(c.expected());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void of_neverListableOrWritableByOthers_andTheGroupNeverNarrowerThanOthers(Case c) {
        int mode = DirectoryAccess.of(c.files()).mode();
        assertThat(mode & ~0751).isZero();
        assertThat(mode & 0026).as("never writable or listable by others").isZero();
        assertThat((mode & 0001) == 0 || (mode & 0010) != 0).as("group x whenever others x").isTrue();
    }

    /** A process as POSIX sees it: uid, and primary plus supplementary groups. */
    record Process(int uid, Set<Integer> groups) {
        @Override
        public String toString() {
            return "uid " + uid + " groups " + groups;
        }
    }

    /**
     * The processes a pod's containers can be: root; a user whose primary group is 0 (runAsUser without
     * runAsGroup); the same with fsGroup or supplementalGroups; users in their own or the files' groups.
     */
    private static final List<Process> PROCESSES = List.of(
            new Process(0, Set.of(0)),
            new Process(1000, Set.of(0)),
            new Process(1000, Set.of(3000)),
            new Process(1000, Set.of(0, 2000)),
            new Process(1000, Set.of(3000, 2000)),
            new Process(1000, Set.of(0, 4000)),
            new Process(2000, Set.of(0, 2000)),
            new Process(7, Set.of(7)),
            new Process(9, Set.of(0)),
            new Process(1001, Set.of(5)),
            new Process(1001, Set.of(6)),
            new Process(1001, Set.of(34)),
            new Process(1001, Set.of(1001)),
            new Process(65534, Set.of(65534)),
            new Process(65534, Set.of(65533)));

    /**
     * PV-16..PV-18: a container reads a satoken file if and only if it reads the same file in kubelet's 0755
     * root:root (or root:fsGroup) directories, for every container a pod can have. Fails for the old 0701
     * rule: user 1000 in group 0 was refused the directory.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void of_letsThroughEveryProcessTheFilesModeLetsRead_asKubeletsDirectoriesDo(Case c) {
        DirectoryAccess access = DirectoryAccess.of(c.files());
        int dirGid = access.gid() == null ? 0 : access.gid();
        List<String> differences = new ArrayList<>();
        for (FileContent f : c.files()) {
            int uid = f.uid() == null ? 0 : f.uid();
            int gid = f.gid() == null ? 0 : f.gid();
            for (Process p : PROCESSES) {
                boolean kubelet = allows(p, uid, gid, f.mode(), 4);
                boolean satoken = allows(p, 0, dirGid, access.mode(), 1) && kubelet;
                if (satoken != kubelet) {
                    differences.add(p + " reading " + f + " through " + access);
                }
            }
        }
        assertThat(differences).isEmpty();
    }

    @Test
    void of_old0701Rule_wouldRefuseAUserInGroup0() {
        // the regression this class's step 4 fixes, on the POSIX check the test above uses
        Process user = new Process(1000, Set.of(0));
        assertThat(allows(user, 0, 0, 0701, 1)).isFalse();
        assertThat(allows(user, 0, 0, DirectoryAccess.of(List.of(file(0600, 1000, null))).mode(), 1)).isTrue();
    }

    @Test
    void constructor_refusesWiderModes_andAGroupNarrowerThanOthers() {
        assertThatThrownBy(() -> new DirectoryAccess(null, 0755))
                .hasMessage("mode: must be 0700 plus at most 0051, got 0755");
        assertThatThrownBy(() -> new DirectoryAccess(null, 0701))
                .hasMessage("mode: the group may not have less than others, or a process in the group is refused what "
                        + "any other user may do, got 0701");
        assertThatThrownBy(() -> new DirectoryAccess(5, 0741))
                .hasMessageStartingWith("mode: the group may not have less than others");
        assertThatThrownBy(() -> new DirectoryAccess(-1, 0750)).hasMessage("gid: must not be negative, got -1");
        assertThat(new DirectoryAccess(null, 0711).permissions()).hasSize(5);
    }

    /**
     * POSIX's check (root aside, which bypasses it): the owner's bits for the owner, else the group's bits
     * for a member, else the others' bits; {@code bit} is 4 (read) or 1 (search).
     */
    private static boolean allows(Process p, int ownerUid, int groupGid, int mode, int bit) {
        if (p.uid() == 0) {
            return true;
        }
        if (p.uid() == ownerUid) {
            return ((mode >> 6) & bit) != 0;
        }
        if (p.groups().contains(groupGid)) {
            return ((mode >> 3) & bit) != 0;
        }
        return (mode & bit) != 0;
    }
}
