/**
 * What a pod may ask of the agent, read the same way on both sides. {@link CsiVolumeAttributes} reads the attributes
 * of a {@code tokens.satoken.io} CSI volume (one file, or a {@code projections} list) into {@link ProjectionSpec}s:
 * the agent reads them to publish the volume, and the control plane's token webhook to know which TokenRequests the
 * agent may make for the pod. {@link ProjectionAnnotation} parses the {@code satoken.io/projections} format, used by
 * that list and by the webhook that turns the annotation into the volume. Both, and the agent's static config, read a
 * file's fields through {@link TokenFileFields}, once per rule; {@link TokenAsk} is what a file asks the API server
 * for, the one place that says what a file without an audience means, and the one check of a token against a file.
 * {@code SafeYaml}, {@code YamlFields},
 * {@code FieldErrors} and {@code TokenFilePaths} (bounded YAML loading, typed fields, error lists, file paths) also
 * serve the agent's config parser.
 */
package io.satoken.common.projection;
