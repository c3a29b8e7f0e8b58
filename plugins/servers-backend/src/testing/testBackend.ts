/*
 * The servers plugin in a test backend for the route tests: the auditor and the
 * permission service are mocks that record what the routes did with them, signals
 * are kept, and the caller passes the state registries (and any other service).
 */
import {
  createServiceFactory,
  type AuditorServiceEvent,
  type ServiceFactory,
} from '@backstage/backend-plugin-api';
import {
  mockCredentials,
  mockServices,
  startTestBackend,
} from '@backstage/backend-test-utils';
import {
  AuthorizeResult,
  type AuthorizePermissionRequest,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import { signalsServiceRef } from '@backstage/plugin-signals-node';
import {
  notificationService,
  type NotificationSendOptions,
} from '@backstage/plugin-notifications-node';
import { serversPlugin } from '../plugin';

/** One audit event as the mock auditor saw it: how it was opened and how it ended. */
export interface RecordedAuditEvent {
  options: any;
  outcome?: 'success' | 'fail';
  meta?: any;
  error?: any;
}

export interface ServersTestBackendOptions {
  /** The registries and any other service the test replaces. */
  features: ServiceFactory[];
  /** Answers of `authorize` by permission name; unnamed permissions are allowed. */
  decisions?: Record<string, AuthorizeResult.ALLOW | AuthorizeResult.DENY>;
  /** The answer of every `authorizeConditional` (the read rule); allowed if unset. */
  read?: PolicyDecision;
  /** Answers of `authorizeConditional` for other permissions, by name (before `decisions`). */
  conditional?: Record<string, PolicyDecision>;
  /** The `servers` config block. */
  config?: object;
  /** Use Backstage's own auditor (it logs through the root logger) instead of the recording mock. */
  realAuditor?: boolean;
  /** Who calls the routes; the mock's default user if unset. */
  credentials?:
    | ReturnType<typeof mockCredentials.service>
    | ReturnType<typeof mockCredentials.user>;
}

/** The started backend and what its mocks recorded while the test ran. */
export interface ServersTestBackend {
  server: Awaited<ReturnType<typeof startTestBackend>>['server'];
  /** Every audit event, in order. */
  events: RecordedAuditEvent[];
  /** Every `authorize` request, in order. */
  authorized: AuthorizePermissionRequest[];
  /** Every signal published. */
  published: any[];
  /**
   * Every notification sent through the notification service (unless the test passes
   * its own `notificationService` factory).
   */
  notifications: NotificationSendOptions[];
}

export async function startServersTestBackend(
  options: ServersTestBackendOptions,
): Promise<ServersTestBackend> {
  const events: RecordedAuditEvent[] = [];
  const auditor = mockServices.auditor.mock({
    createEvent: async opts => {
      const entry: RecordedAuditEvent = { options: opts };
      events.push(entry);
      const event: AuditorServiceEvent = {
        success: async o => {
          entry.outcome = 'success';
          entry.meta = o?.meta;
        },
        fail: async o => {
          entry.outcome = 'fail';
          entry.meta = o.meta;
          entry.error = o.error;
        },
      };
      return event;
    },
  });
  const authorized: AuthorizePermissionRequest[] = [];
  const permissions = mockServices.permissions.mock({
    authorize: async requests =>
      requests.map(r => {
        authorized.push(r as AuthorizePermissionRequest);
        return {
          result:
            options.decisions?.[r.permission.name] ?? AuthorizeResult.ALLOW,
        };
      }),
    // servers:read answers `read`; an action permission answers its `decisions` entry.
    authorizeConditional: async requests =>
      requests.map(r =>
        r.permission.name === 'servers:read'
          ? options.read ?? { result: AuthorizeResult.ALLOW }
          : options.conditional?.[r.permission.name] ?? {
              result:
                options.decisions?.[r.permission.name] ?? AuthorizeResult.ALLOW,
            },
      ) as any,
  });
  const published: any[] = [];
  const notifications: NotificationSendOptions[] = [];
  const ownNotifications = options.features.some(
    f => f.service.id === notificationService.id,
  );
  const { server } = await startTestBackend({
    features: [
      serversPlugin,
      options.realAuditor ? mockServices.auditor.factory() : auditor.factory,
      permissions.factory,
      createServiceFactory({
        service: signalsServiceRef,
        deps: {},
        factory: () => ({
          publish: async (signal: any) => {
            published.push(signal);
          },
        }),
      }),
      ...(ownNotifications
        ? []
        : [
            createServiceFactory({
              service: notificationService,
              deps: {},
              factory: () => ({
                send: async (n: NotificationSendOptions) => {
                  notifications.push(n);
                },
              }),
            }),
          ]),
      ...options.features,
      ...(options.credentials
        ? [
            mockServices.httpAuth.factory({
              defaultCredentials: options.credentials,
            }),
          ]
        : []),
      mockServices.rootConfig.factory({
        data: { servers: { ...options.config } },
      }),
    ],
  });
  return { server, events, authorized, published, notifications };
}
