/**
 * Warning Events on the pods whose tokens have trouble: {@link PodEventSink} is where the CSI volumes report a
 * TokenRequest that fails or a token issued ahead of the node's clock, and {@link KubeEventRecorder} sends those
 * Events to the API server as kubelet's recorder does (a repeat within an hour raises the first Event's count), from
 * one background thread with a bounded queue. Messages never hold a token.
 */
package io.satoken.agent.pods;
