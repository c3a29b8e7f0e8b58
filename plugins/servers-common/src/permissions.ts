import {
  createPermission,
  type BasicPermission,
  type ResourcePermission,
} from '@backstage/plugin-permission-common';

/** The resource type every `servers:*` permission is checked against. */
export const SERVER_RESOURCE_TYPE = 'server';

/** A server permission carries the node as its resource. */
export type ServerPermission = ResourcePermission<typeof SERVER_RESOURCE_TYPE>;

/** See the list of servers and their maintenances. */
export const serversReadPermission = createPermission({
  name: 'servers:read',
  attributes: { action: 'read' },
  resourceType: SERVER_RESOURCE_TYPE,
});

/** Mark a node unschedulable. */
export const serversCordonPermission = createPermission({
  name: 'servers:cordon',
  attributes: { action: 'update' },
  resourceType: SERVER_RESOURCE_TYPE,
});

/** Return a node to service (uncordon). */
export const serversUncordonPermission = createPermission({
  name: 'servers:uncordon',
  attributes: { action: 'update' },
  resourceType: SERVER_RESOURCE_TYPE,
});

/** Cordon and evict every evictable pod. */
export const serversDrainPermission = createPermission({
  name: 'servers:drain',
  attributes: { action: 'update' },
  resourceType: SERVER_RESOURCE_TYPE,
});

/** Drain, then reboot through the power channel. */
export const serversRebootPermission = createPermission({
  name: 'servers:reboot',
  attributes: { action: 'update' },
  resourceType: SERVER_RESOURCE_TYPE,
});

/** Drain, then power off through the power channel. */
export const serversShutdownPermission = createPermission({
  name: 'servers:shutdown',
  attributes: { action: 'update' },
  resourceType: SERVER_RESOURCE_TYPE,
});

/** Power a shut-down server back on. */
export const serversPowerOnPermission = createPermission({
  name: 'servers:power-on',
  attributes: { action: 'update' },
  resourceType: SERVER_RESOURCE_TYPE,
});

/** Give up a maintenance and restore the node's previous schedulability. */
export const serversMaintenanceAbandonPermission = createPermission({
  name: 'servers:maintenance-abandon',
  attributes: { action: 'update' },
  resourceType: SERVER_RESOURCE_TYPE,
});

/** See discovery addresses, discovered machines and reclaim requests. */
export const machinesReadPermission = createPermission({
  name: 'machines:read',
  attributes: { action: 'read' },
});

/** Add a discovery address or join a machine in maintenance mode. */
export const machinesAddPermission = createPermission({
  name: 'machines:add',
  attributes: { action: 'create' },
});

/** Reset a machine another Talos cluster holds, then add it ("Reset and add"). */
export const machinesReclaimPermission = createPermission({
  name: 'machines:reclaim',
  attributes: { action: 'update' },
});

/**
 * Create a MaintenancePlan (many servers through one intent under one budget) and pause,
 * resume or cancel one. Not tied to one server: creating a plan also needs the intent's
 * own permission (`servers:drain` or `servers:reboot`) on every node of the plan.
 */
export const serversPlanPermission = createPermission({
  name: 'servers:plan',
  attributes: { action: 'update' },
});

/**
 * Drain with an option that loses data: `deleteEmptyDirData` (emptyDir contents),
 * `force` (pods without a controller are not recreated) or `allowNodeLocalData` (pods
 * whose data is on the node cannot run elsewhere until it is back). Asked on the server
 * in addition to the action's own permission, for a single maintenance and for every
 * node of a plan. Admin tier by default.
 */
export const serversDrainDataPermission = createPermission({
  name: 'servers:drain-data',
  attributes: { action: 'update' },
  resourceType: SERVER_RESOURCE_TYPE,
});

/**
 * Approve or reject a request a rule of `servers.approvals.rules` holds (docs/approvals.md).
 * Asked on every server of the request; the approver must also be named by the rule, and
 * is never the requester, an MCP agent or a service token.
 */
export const serversApprovePermission = createPermission({
  name: 'servers:approve',
  attributes: { action: 'update' },
  resourceType: SERVER_RESOURCE_TYPE,
});

/**
 * Drain, then install another Talos version (a NodeMaintenance with intent `upgrade`,
 * docs/upgrades.md). Its own name, apart from `servers:reboot`, so that a deployment can
 * let people reboot who may not change what runs on the machine.
 */
export const serversUpgradePermission = createPermission({
  name: 'servers:upgrade',
  attributes: { action: 'update' },
  resourceType: SERVER_RESOURCE_TYPE,
});

/**
 * Drain, then have the BMC install a firmware image (a NodeMaintenance with intent
 * `firmware`, docs/upgrades.md). Its own name, apart from `servers:reboot` and
 * `servers:upgrade`: BIOS and BMC firmware is a different trust than the OS a node runs.
 */
export const serversFirmwarePermission = createPermission({
  name: 'servers:firmware',
  attributes: { action: 'update' },
  resourceType: SERVER_RESOURCE_TYPE,
});

/** The drain options {@link serversDrainDataPermission} guards. */
export const DATA_LOSS_DRAIN_OPTIONS = [
  'deleteEmptyDirData',
  'force',
  'allowNodeLocalData',
] as const;

/** The data-loss options set in drain options (empty: none, no extra permission). */
export function dataLossOptionsOf(
  drain: Partial<
    Record<(typeof DATA_LOSS_DRAIN_OPTIONS)[number], unknown>
  > = {},
): string[] {
  return DATA_LOSS_DRAIN_OPTIONS.filter(option => drain[option] === true);
}

/** Every server action a user can request, by its route name. */
export const serverActionPermissions = {
  cordon: serversCordonPermission,
  uncordon: serversUncordonPermission,
  drain: serversDrainPermission,
  reboot: serversRebootPermission,
  shutdown: serversShutdownPermission,
  'power-on': serversPowerOnPermission,
  'maintenance-abandon': serversMaintenanceAbandonPermission,
  upgrade: serversUpgradePermission,
  firmware: serversFirmwarePermission,
} as const satisfies Record<string, ServerPermission>;

export type ServerAction = keyof typeof serverActionPermissions;

export const SERVER_ACTIONS = Object.keys(
  serverActionPermissions,
) as ServerAction[];

/** Type guard for the `:action` route parameter. */
export function isServerAction(value: string): value is ServerAction {
  return Object.prototype.hasOwnProperty.call(serverActionPermissions, value);
}

/** The plan permission (not tied to one server). */
export const planPermissions: BasicPermission[] = [serversPlanPermission];

/** The machine permissions (not tied to one server). */
export const machinePermissions: BasicPermission[] = [
  machinesReadPermission,
  machinesAddPermission,
  machinesReclaimPermission,
];

/** All sixteen Rackside permissions, for registration and policy validation. */
export const serversPermissions = [
  serversReadPermission,
  // The server actions, servers:upgrade and servers:firmware among them.
  ...Object.values(serverActionPermissions),
  serversDrainDataPermission,
  serversApprovePermission,
  ...planPermissions,
  ...machinePermissions,
];
