/**
 * The injection check: pods that ask for satoken tokens but were created without the webhook's volume.
 */
package io.satoken.controlplane.injection;
