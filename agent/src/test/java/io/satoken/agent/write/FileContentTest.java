package io.satoken.agent.write;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class FileContentTest {

    @Test
    void mode_outOfRange_isRejectedNamingTheField() {
        assertThatThrownBy(() -> FileContent.of(new byte[0], 01000))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("mode: must be between 0 and 0777, got 01000");
        assertThatThrownBy(() -> FileContent.of(new byte[0], -1))
                .hasMessage("mode: must be between 0 and 0777, got -1");
    }

    @Test
    void data_isCopiedInAndOut() {
        byte[] data = {1, 2, 3};
        FileContent content = FileContent.of(data, 0600);
        data[0] = 9;
        content.data()[1] = 9;

        assertThat(content.data()).containsExactly(1, 2, 3);
    }

    @Test
    void equality_comparesArrayContent() {
        assertThat(new FileContent(new byte[] {1}, 0600, 1000, null))
                .isEqualTo(new FileContent(new byte[] {1}, 0600, 1000, null))
                .hasSameHashCodeAs(new FileContent(new byte[] {1}, 0600, 1000, null))
                .isNotEqualTo(new FileContent(new byte[] {2}, 0600, 1000, null))
                .isNotEqualTo(new FileContent(new byte[] {1}, 0644, 1000, null));
    }

    @Test
    void toString_neverShowsTheData() {
        FileContent content = new FileContent("secret-token-value-of-37-bytes-long!!".getBytes(), 0600, 1000, null);

        assertThat(content).hasToString("FileContent[<37 bytes>, mode=0600, uid=1000, gid=null]");
    }
}
