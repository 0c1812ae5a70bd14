/**
 * The ClusterRole aggregation controller ({@code aggregation}, upstream section 7): every ClusterRole with an
 * aggregationRule gets the rules of the ClusterRoles its selectors match, written by server-side apply
 * (CR-2..CR-7). {@link AggregationController} wires the triggers and the loop, {@link AggregationSync} reconciles one
 * role and {@link AggregateRules} computes its rules, converging around cycles of aggregates too. Where upstream
 * queues every aggregate on every event (CR-1), {@link AggregationTriggers} queues only those the event can affect,
 * found through label indexes ({@code RolesByLabel}, {@code Selector}). API writes go through the
 * {@code ClusterRoleWriter} seam.
 */
package io.satoken.controlplane.aggregation;
