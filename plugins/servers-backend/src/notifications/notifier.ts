import type { LoggerService } from '@backstage/backend-plugin-api';
import type { NotificationSeverity } from '@backstage/plugin-notifications-common';
import type { NotificationService } from '@backstage/plugin-notifications-node';

/**
 * One notification Rackside sends: to whom, what, where it links, how urgent, and its
 * `scope` (the name of the NodeMaintenance or MachineReclaim it is about). The
 * notifications backend keeps one notification per recipient, origin and scope: a
 * later send with the same scope replaces the first instead of adding another. It
 * looks for that row before inserting, so two sends at the same instant (two backend
 * replicas that saw the same change) can store two: each is claimed on its object
 * first (./claims.ts), and only the replica that claimed it sends.
 */
export interface ServersNotification {
  /** Entity refs of users or groups (a group reaches its members). */
  recipients: string[];
  title: string;
  description: string;
  /** A path of the portal (the maintenance page, the Add node page). */
  link: string;
  severity: NotificationSeverity;
  scope: string;
  topic: string;
}

/** Where Rackside's notifications go; kept small so tests and other channels can stand in. */
export interface ServersNotifier {
  notify(notification: ServersNotification): Promise<void>;
}

/** The topics Rackside's notifications carry (the user's notification settings list them). */
export const NOTIFICATION_TOPICS = {
  maintenance: 'Server maintenance',
  reclaim: 'Machine reclaim',
  workloads: 'Workloads on servers under maintenance',
  approvals: 'Approvals',
} as const;

/** A notifier over Backstage's notification service (`@backstage/plugin-notifications-node`). */
export function notificationServiceNotifier(
  service: NotificationService,
): ServersNotifier {
  return {
    async notify(n) {
      if (n.recipients.length === 0) return;
      await service.send({
        recipients: { type: 'entity', entityRef: n.recipients },
        payload: {
          title: n.title,
          description: n.description,
          link: n.link,
          severity: n.severity,
          scope: n.scope,
          topic: n.topic,
        },
      });
    },
  };
}

/** A notifier that sends nothing (`servers.notifications.enabled: false`). */
export function silentNotifier(logger?: LoggerService): ServersNotifier {
  return {
    async notify(n) {
      logger?.debug(`notifications disabled: not sending "${n.title}"`);
    },
  };
}
