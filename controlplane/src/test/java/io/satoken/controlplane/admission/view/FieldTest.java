package io.satoken.controlplane.admission.view;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Declared fields: the shape the review reader keeps is derived from them, and they are the only way to read. */
class FieldTest {

    @Test
    void shape_keepsEveryDeclaredMember_inTheShapeOfItsRead() {
        Field.Obj root = Field.root();
        Field.Obj spec = root.object("spec");
        spec.string("name");
        spec.bool("automount");
        spec.strings("audiences");
        spec.scalar("expirationSeconds");
        spec.objects("volumes").item().whole("csi");
        root.stringMap("labels");
        root.stringListMap("extra");

        assertThat(root.shape()).isEqualTo(members(Map.of(
                "spec", members(Map.of("name", ReviewShape.SCALAR, "automount", ReviewShape.SCALAR,
                        "audiences", new ReviewShape.Items(ReviewShape.SCALAR), "expirationSeconds", ReviewShape.SCALAR,
                        "volumes", new ReviewShape.Items(members(Map.of("csi", ReviewShape.WHOLE))))),
                "labels", new ReviewShape.Members(Map.of(), ReviewShape.SCALAR),
                "extra", new ReviewShape.Members(Map.of(), new ReviewShape.Items(ReviewShape.SCALAR)))));
    }

    @Test
    void includedRoots_areMerged_aMemberDeclaredTwiceKeptAsBothWantIt() {
        Field.Obj pod = Field.root();
        pod.object("spec").string("serviceAccountName");
        Field.Obj tokenRequest = Field.root();
        tokenRequest.object("spec").strings("audiences");
        Field.Obj review = Field.root();
        review.object("object", pod, tokenRequest);

        assertThat(review.shape()).isEqualTo(members(Map.of("object", members(Map.of("spec", members(Map.of(
                "serviceAccountName", ReviewShape.SCALAR, "audiences", new ReviewShape.Items(ReviewShape.SCALAR))))))));
    }

    @Test
    void aDeclarationMadeAfterTheShapeWasDerived_isKeptFromThenOn() {
        Field.Obj root = Field.root();
        Field.Obj annotations = root.object("annotations");
        assertThat(root.shape()).isEqualTo(members(Map.of("annotations", members(Map.of()))));

        annotations.string("example.com/late");

        assertThat(root.shape()).isEqualTo(members(Map.of("annotations",
                members(Map.of("example.com/late", ReviewShape.SCALAR)))));
    }

    @Test
    void oneMemberDeclaredAsTwoKindsOfValue_isRefused() {
        Field.Obj root = Field.root();
        root.string("spec");
        root.object("spec");

        assertThatThrownBy(root::shape).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("one member declared as two kinds of value");
    }

    @Test
    void read_namesThePathOfAValueOfTheWrongType() {
        Field.Obj root = Field.root();
        Field.Str name = root.string("name");
        JsonObject json = JsonParser.parseString("{\"name\": 7}").getAsJsonObject();

        assertThatThrownBy(() -> name.read(json, "metadata")).isInstanceOf(InvalidReviewException.class)
                .hasMessage("metadata.name: must be a string, got a number");
    }

    /** Reading a member by its name alone does not compile outside this package: Json's reads are not public. */
    @Test
    void json_hasNoPublicReadByName() {
        List<Method> publicReads = Arrays.stream(Json.class.getDeclaredMethods())
                .filter(m -> Modifier.isPublic(m.getModifiers()))
                .filter(m -> Arrays.asList(m.getParameterTypes()).contains(JsonObject.class)).toList();

        assertThat(publicReads).isEmpty();
    }

    /** ... and inside it, only a declared field reads by name. */
    @Test
    void onlyField_readsThroughJsonByName() throws IOException {
        Pattern read = Pattern.compile("\\bJson\\.(object|objects|string|stringOrEmpty|bool|strings)\\(");
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            List<Path> readers = files.filter(f -> f.toString().endsWith(".java"))
                    .filter(f -> !f.getFileName().toString().equals("Field.java"))
                    .filter(f -> {
                        try {
                            return read.matcher(Files.readString(f)).find();
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    }).toList();
            assertThat(readers).isEmpty();
        }
    }

    private static ReviewShape members(Map<String, ReviewShape> named) {
        return new ReviewShape.Members(named);
    }
}
