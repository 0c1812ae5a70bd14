/**
 * Warning Events on the pods whose tokens have trouble. {@link PodEvents} observes the refresh (a TokenRequest that
 * fails after a volume's first write), the read tracker (a rotated token not re-read, then still held near its
 * expiry) and the clock check (a token issued ahead of the node's clock), and sends each Event to the pod the
 * directory it is told of carries: it looks nothing up. {@link PodEventSink} is where the Events go, and
 * {@link KubeEventRecorder} sends them to the API server as kubelet's recorder does (a repeat within an hour raises
 * the first Event's count), from one background thread with a bounded queue. Messages never hold a token.
 */
package io.satoken.agent.pods;
