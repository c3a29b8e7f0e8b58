/*
 * The types the NodeMaintenance lifecycle shares: what its rows read (the cluster view
 * and the ports), what they answer (Decision) and the row itself. In their own file so
 * the rows of table.ts, its row files and guardCheck.ts import them without importing
 * each other.
 */
import type { AlertReads } from '../runtime/alertReads';
import type {
  HardwareHealthFacts,
  DrainContext,
  InvokeResult,
  MaintenancePhase,
  NodeMaintenance,
  NodeMaintenanceStatus,
  PodLike,
  PowerVerb,
  FirmwareComponent,
  FirmwareRequest,
  UpgradeRequest,
} from '@rackside/plugin-servers-common';
import type { FirmwareTaskReading } from '@rackside/plugin-servers-node';
import type { DrainOutcome } from './drain/DrainRunner';
import type { Clock, Done, NEW, Wait } from '../runtime/lifecycle/table';
import type { NodeView } from '../runtime/nodeView';

/** A maintenance without a phase yet (just created) is `New`. */
export type Phase = MaintenancePhase | typeof NEW;

/** What the rows read of a Node: the runtime's view (runtime/nodeView.ts). */
export type { NodeView };

/** Reads of the cluster, served from watch caches. */
export interface ClusterView {
  node(name: string): NodeView | undefined;
  nodes(): NodeView[];
  maintenances(): NodeMaintenance[];
  /** The node's BMC health reading (its ServerBMC's status.health); a healthy return needs it not Critical. */
  hardware?(nodeName: string): HardwareHealthFacts | undefined;
  /**
   * The firmware inventory of the node's BMC as its last health reading listed it (its
   * ServerBMC's status.health.firmware); a firmware update to a version every targeted
   * component already reports is Refused at admission on it (firmwareRows.ts).
   */
  firmwareReading?(
    nodeName: string,
  ): ReadonlyArray<{ name: string; version: string }> | undefined;
}

/** The one node write the machine makes. Idempotent: setting the current value is a no-op. */
export interface NodePort {
  setUnschedulable(nodeName: string, unschedulable: boolean): Promise<void>;
}

/** The pods of a node, read once when a drain is admitted. */
export interface PodPort {
  onNode(nodeName: string): Promise<PodLike[]>;
  /**
   * The node's labels, these pods' claims and the PersistentVolumes (node-local data).
   * Without it only hostPath volumes count as data on the node.
   */
  storage?(
    nodeName: string,
    pods: PodLike[],
  ): Promise<Omit<DrainContext, 'nodeName'>>;
}

/** Drains run outside the table; a row only asks where one stands (DrainRunner). */
export interface DrainPort {
  ensure(nm: NodeMaintenance): DrainOutcome;
}

/** The verbs the operator sends, named as in `status.power`. */
export type PowerSendVerb =
  | 'reboot'
  | 'shutdown'
  | 'powerOn'
  | 'upgrade'
  | 'firmware';

/** What became of a sent verb. */
export type SendOutcome =
  | {
      ok: true;
      receipt: {
        acceptedAt: string;
        detail: string;
        /** The BMC's task monitor of an accepted firmware update. */
        taskUri?: string;
      };
      /** The channel will be read for PowerState Off (shutdown). */
      confirmsPowerOff?: boolean;
    }
  | {
      ok: false;
      /** notSent / refused: it did not run. unknown: it may have. */
      outcome: 'notSent' | 'refused' | 'unknown';
      message: string;
    };

/** The deployment's power channel, as the rows see it (PowerProvider reconciler). */
export interface PowerPort {
  /** The capability rule (servers-common `invoke`) for this node now. */
  check(verb: PowerVerb, node: NodeView | undefined): InvokeResult;
  /**
   * The capability rule for a firmware update (servers-common `invokeFirmware`): whether
   * the BMC offers an UpdateService, when it has been read.
   */
  checkFirmware?(
    node: NodeView | undefined,
    updateService?: boolean,
  ): InvokeResult;
  channelType(): 'talos' | 'redfish' | undefined;
  /** One read of the machine's power; undefined when the channel cannot see it. */
  powerState(node: NodeView | undefined): Promise<'On' | 'Off' | undefined>;
  /** The PowerOffConfirmed readback, or undefined when the channel cannot observe Off. */
  readback(): { windowSeconds: number; intervalSeconds: number } | undefined;
  /**
   * One read of the Talos version the node's machine runs (MachineService.Version, over the
   * talos channel after its identity check); throws when it cannot be read. Absent: the
   * channel reads none, and an upgrade cannot be judged done (upgradeRows.ts).
   */
  talosVersion?(node: NodeView | undefined): Promise<string>;
  /**
   * The node's BMC firmware, read through the channel (redfish only: the others reject),
   * each read bounded in size and time (firmwareRows.ts).
   */
  firmware?: FirmwareReads;
  deadlines: {
    /** From the accepted reboot to the node back with a new boot ID. */
    rebootSeconds: number;
    /** A recorded verb without an answer fails after this long without a sign. */
    unansweredSeconds: number;
    /**
     * From the accepted upgrade to the node back on its target (and how long a recorded
     * upgrade without an answer is watched); absent: upgradeRows.ts's default.
     */
    upgradeSeconds?: number;
  };
}

/** Reads of a node's BMC firmware (servers-node's RedfishFirmwareUpdater through the channel). */
export interface FirmwareReads {
  /** Whether the BMC offers an UpdateService that takes an update. */
  offered(node: NodeView | undefined): Promise<boolean>;
  inventory(node: NodeView | undefined): Promise<FirmwareComponent[]>;
  task(
    node: NodeView | undefined,
    taskUri: string,
  ): Promise<FirmwareTaskReading>;
  /**
   * What is known now of the image's `sha256:<64 hex>` as the channel fetches it from its
   * source (bounded, hashed as it streams in, with the source's credentials). Never waits
   * for the fetch: it runs in the background (powerprovider/imageChecksums.ts), as the
   * row that asks holds the admission lock.
   */
  checksum?(imageURI: string): ChecksumReading;
}

/** What is known of an image's sha256 now (FirmwareReads.checksum). */
export type ChecksumReading =
  | { state: 'fetching' }
  | { state: 'read'; checksum: string }
  | { state: 'failed'; message: string };

/**
 * The one send of a recorded power verb, at the edge (powerprovider/powerSend.ts on the
 * PowerProvider's channel), handed to the NodeMaintenance controller. Only the
 * reconciler calls it, after the verb is recorded; the rows never send.
 */
export interface PowerSendPort {
  send(
    verb: PowerSendVerb,
    node: NodeView | undefined,
    /** What `upgrade` installs (the maintenance's spec.upgrade). */
    upgrade?: UpgradeRequest,
    /** What `firmware` asks the BMC (the maintenance's spec.firmware). */
    firmware?: FirmwareRequest,
  ): Promise<SendOutcome>;
}

export interface MachinePorts extends Clock {
  view: ClusterView;
  nodes: NodePort;
  pods: PodPort;
  drains: DrainPort;
  power: PowerPort;
  /**
   * Alertmanager for a healthy return asked in spec.healthyReturn (docs/alerts.md);
   * absent when none is configured: the return checks Ready only.
   */
  returnAlerts?: AlertReads;
  /**
   * The Talos installer image prefixes an upgrade may install (`--talos-image-prefixes`,
   * docs/upgrades.md); absent or empty: every upgrade is refused.
   */
  upgrades?: {
    imagePrefixes: readonly string[];
    /**
     * The https origins a firmware update may fetch its image from (`--firmware-sources`,
     * docs/upgrades.md); absent or empty: every firmware update is refused.
     */
    firmwareSources?: readonly string[];
    /**
     * Those of `firmwareSources` whose images are sent only with a checksum
     * (`--firmware-sources-requiring-checksum`): a request from them without
     * spec.firmware.checksum is refused.
     */
    firmwareChecksumRequired?: readonly string[];
  };
}

export type RefusalCause =
  | 'virtual'
  | 'busy'
  | 'guard'
  | 'pods'
  | 'capability'
  /** An upgrade's image not allowed or without a version, or the node already at it. */
  | 'upgrade'
  | 'attribution'
  | 'approval';

/** What a row decided. */
export type Decision =
  | {
      kind: 'transition';
      to: MaintenancePhase;
      message: string;
      /** Status fields written together with the phase. */
      status?: Partial<NodeMaintenanceStatus>;
      /** The Event; Normal with reason = target phase unless given. */
      event?: { type: 'Normal' | 'Warning'; reason: string };
      refusal?: RefusalCause;
    }
  /**
   * Status fields written without a phase change (no history entry), then, with `send`,
   * the verb is sent and its answer decided by `afterSend` (powerRows.ts).
   */
  | {
      kind: 'record';
      message: string;
      status: Partial<NodeMaintenanceStatus>;
      send?: PowerSendVerb;
      event?: { type: 'Normal' | 'Warning'; reason: string };
    }
  /**
   * Nothing to do until something changes (a watch event wakes the maintenance), or
   * until `requeueAfterMs` passes.
   */
  | (Wait & { message: string })
  /** Terminal: never looked at again. */
  | Done;

export type Row = (
  nm: NodeMaintenance,
  ports: MachinePorts,
) => Promise<Decision>;
