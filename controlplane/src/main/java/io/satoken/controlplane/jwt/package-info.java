/**
 * Signs legacy (Secret-based) ServiceAccount tokens as kube-controller-manager does, so kube-apiserver accepts them
 * with the matching {@code --service-account-key-file}. {@link ServiceAccountSigner} picks the algorithm from the
 * key (RS256, ES256, ES384, ES512), derives the {@code kid} and writes the claims (CL-1..CL-3); it reads
 * {@code --service-account-private-key-file} through {@code PrivateKeyPem}, and a bad file is a
 * {@link KeyFileException} that names the flag and never quotes the key. The tokens controller sees only the
 * {@link LegacyTokenGenerator} seam.
 */
package io.satoken.controlplane.jwt;
