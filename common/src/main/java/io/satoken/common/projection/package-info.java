/**
 * What a pod may ask of the agent, read the same way on both sides. {@link CsiVolumeAttributes} reads the attributes
 * of a {@code tokens.satoken.io} CSI volume (one file, or a {@code projections} list) into {@link ProjectionSpec}s:
 * the agent reads them to publish the volume, and the control plane's token webhook to know which TokenRequests the
 * agent may make for the pod. {@link ProjectionAnnotation} parses the {@code satoken.io/projections} format, used by
 * that list and by the webhook that turns the annotation into the volume. {@code SafeYaml}, {@code YamlFields},
 * {@code FieldErrors} and {@code TokenFilePaths} (bounded YAML loading, typed fields, error lists, file paths) also
 * serve the agent's config parser.
 */
package io.satoken.common.projection;
