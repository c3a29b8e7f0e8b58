import type { KubeObject } from '@rackside/plugin-servers-node';
import type { EventRecorder } from '../events';

/** What a reconciler's `events` port takes: the object, and what happened to it. */
export interface ObjectEvents<T extends KubeObject> {
  record(
    obj: T,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): Promise<void>;
}

/**
 * The one adapter from a reconciler's events port to the Event recorder: the Event is
 * about the object (kind, name, namespace, uid), so `kubectl describe` shows it there.
 */
export function eventsFor<T extends KubeObject>(
  recorder: EventRecorder,
  descriptor: { apiVersion: string; kind: string },
): ObjectEvents<T> {
  return {
    record: (obj, type, reason, message) =>
      recorder.record(
        {
          apiVersion: descriptor.apiVersion,
          kind: descriptor.kind,
          name: obj.metadata?.name ?? '',
          namespace: obj.metadata?.namespace,
          uid: obj.metadata?.uid,
          phase: statusPhaseOf(obj),
        },
        type,
        reason,
        message,
      ),
  };
}

/** status.phase of an object that has one (every Rackside kind does). */
export function statusPhaseOf(obj: object): string | undefined {
  const phase = (obj as { status?: { phase?: unknown } }).status?.phase;
  return typeof phase === 'string' ? phase : undefined;
}
