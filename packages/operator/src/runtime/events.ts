import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { OperatorLog } from './logger';

/** The object an Event is about. */
export interface EventTarget {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  uid?: string;
  /** Where the object's lifecycle stands after what the Event records. */
  phase?: string;
}

export interface EventRecorder {
  /** Emits a Kubernetes Event; failures are logged, never thrown. */
  record(
    target: EventTarget,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): Promise<void>;
}

/**
 * Writes core/v1 Events so `kubectl describe` shows each step of a
 * maintenance. Events for cluster-scoped objects live in `default`, as
 * Kubernetes' own recorder does.
 */
export function createEventRecorder(options: {
  kubeConfig: KubeConfig;
  component: string;
  instance: string;
  log?: OperatorLog;
}): EventRecorder {
  const core = options.kubeConfig.makeApiClient(CoreV1Api);
  return {
    async record(target, type, reason, message) {
      const namespace = target.namespace ?? 'default';
      const now = new Date();
      // One line per thing that happened to an object (each state change records an
      // Event), with the fields a reconcile error carries too.
      options.log?.(`${target.kind} ${target.name}: ${reason}: ${message}`, {
        kind: target.kind,
        name: target.name,
        namespace: target.namespace,
        phase: target.phase,
        reason,
        eventType: type,
      });
      try {
        await core.createNamespacedEvent({
          namespace,
          body: {
            metadata: {
              generateName: `${target.name}.`,
              namespace,
            },
            involvedObject: {
              apiVersion: target.apiVersion,
              kind: target.kind,
              name: target.name,
              namespace: target.namespace,
              uid: target.uid,
            },
            type,
            reason,
            // The apiserver caps messages at 1 KiB.
            message: message.slice(0, 1024),
            source: { component: options.component },
            reportingComponent: options.component,
            reportingInstance: options.instance,
            firstTimestamp: now,
            lastTimestamp: now,
            count: 1,
          },
        });
      } catch (error) {
        options.log?.(
          `event ${reason} on ${target.kind}/${target.name} not recorded: ${
            (error as Error).message
          }`,
        );
      }
    },
  };
}
