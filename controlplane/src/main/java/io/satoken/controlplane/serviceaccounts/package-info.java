/**
 * The ServiceAccounts controller ({@code serviceaccounts}, upstream section 6): a {@code default} ServiceAccount in
 * every Active namespace, created again when it is deleted, and no account ever changed or removed (SC-1..SC-4).
 * {@link ServiceAccountsController} wires the triggers and the loop, {@link ServiceAccountsSync} reconciles one
 * namespace; the one API call goes through the {@code ServiceAccountCreator} seam.
 */
package io.satoken.controlplane.serviceaccounts;
