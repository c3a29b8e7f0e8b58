/*
 * Firmware updates through a BMC's Redfish UpdateService (docs/upgrades.md, "Firmware"):
 * what the BMC offers (SimpleUpdate, else a multipart push), the update sent once, its
 * task monitor read, and the FirmwareInventory before and after. Every read goes through
 * the client (same origin check, session and rate limiter as the power verbs) with the
 * bounds the health reader uses: a byte cap per answer, one deadline per reading, and
 * every list and string the BMC sends cut to the limits of `status.firmware`, so a
 * hostile BMC can neither stall the operator nor grow the object.
 */
import {
  HEALTH_LIMITS,
  MAX_FIRMWARE_TASK_MESSAGES,
  type FirmwareComponent,
  type FirmwareRequest,
} from '@rackside/plugin-servers-common';
import { Deadline } from '../../http/boundedBody';
import type { FirmwareTaskReading } from '../types';
import { RedfishError } from './errors';
import {
  REDFISH_BODY_LIMITS,
  RedfishRawBody,
  type RedfishClient,
} from './RedfishClient';
import { clip } from './readHealth';

type Json = Record<string, any>;

/** One reading (the inventory, or one look at the task) takes at most this long by default. */
export const DEFAULT_FIRMWARE_READ_DEADLINE_MS = 30_000;
/** Characters kept of one task message. */
const MESSAGE_LENGTH = 1024;

/** How the BMC takes an update. */
export type RedfishFirmwareOffer =
  | {
      kind: 'simpleUpdate';
      /** The SimpleUpdate action's target. */
      target: string;
      /** The apply times it names (`@Redfish.OperationApplyTimeSupport`), if any. */
      applyTimes?: string[];
    }
  | { kind: 'multipartPush'; uri: string };

/** The image a multipart push uploads (fetched by the caller from an allowed source). */
export interface FirmwareImage {
  fileName: string;
  bytes: Uint8Array;
}

/** What the BMC answered to an update it accepted. */
export interface FirmwareUpdateAccepted {
  how: RedfishFirmwareOffer['kind'];
  /** The task monitor to follow (the Location header, else the Task's TaskMonitor). */
  taskUri: string;
  status: number;
}

const FAILED_STATES = new Set(['Exception', 'Killed', 'Cancelled']);
const FINISHED_STATES = new Set(['Completed', ...FAILED_STATES]);
const RESET_MESSAGES = /\.(ResetRequired|AwaitToActivate)$/;

function link(resource: Json | undefined, key: string): unknown {
  return resource?.[key]?.['@odata.id'];
}

/** A multipart/form-data body as DMTF's MultipartHttpPushUri takes it. */
export function multipartUpdateBody(
  parameters: Record<string, unknown>,
  image: FirmwareImage,
  boundary = `rackside-${Date.now().toString(36)}${Math.random()
    .toString(36)
    .slice(2)}`,
): RedfishRawBody {
  // The file name goes into a header: nothing that could end it or the line.
  const fileName = image.fileName.replace(/["\r\n\\]/g, '_');
  const head = Buffer.from(
    `--${boundary}\r\n` +
      'Content-Disposition: form-data; name="UpdateParameters"\r\n' +
      'Content-Type: application/json\r\n\r\n' +
      `${JSON.stringify(parameters)}\r\n` +
      `--${boundary}\r\n` +
      `Content-Disposition: form-data; name="UpdateFile"; filename="${fileName}"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new RedfishRawBody(
    `multipart/form-data; boundary=${boundary}`,
    Buffer.concat([head, image.bytes, tail]),
  );
}

/** Reads a Task (from its monitor or itself) into a bounded reading. */
export function readTask(
  body: unknown,
  monitorStatus: number,
): FirmwareTaskReading {
  const task = (body && typeof body === 'object' ? body : {}) as Json;
  // 204 (or 200 without a Task) from a monitor: the operation is done and said nothing.
  const stateOfStatus = monitorStatus === 202 ? 'Running' : 'Completed';
  const rawState: string =
    typeof task.TaskState === 'string' ? task.TaskState : stateOfStatus;
  const state = clip(rawState, 64);
  const list: unknown[] = Array.isArray(task.Messages) ? task.Messages : [];
  const messages: string[] = [];
  let resetRequired = false;
  for (const entry of list.slice(0, 64)) {
    const m = (entry ?? {}) as Json;
    if (typeof m.MessageId === 'string' && RESET_MESSAGES.test(m.MessageId)) {
      resetRequired = true;
    }
    const text = typeof m.Message === 'string' ? m.Message : m.MessageId;
    if (
      typeof text === 'string' &&
      text !== '' &&
      messages.length < MAX_FIRMWARE_TASK_MESSAGES
    ) {
      messages.push(clip(text, MESSAGE_LENGTH));
    }
  }
  const percent = Number(task.PercentComplete);
  const failed =
    FAILED_STATES.has(rawState) ||
    (FINISHED_STATES.has(rawState) && task.TaskStatus === 'Critical');
  return {
    state,
    finished: FINISHED_STATES.has(rawState),
    failed,
    percent:
      Number.isFinite(percent) && percent >= 0 && percent <= 100
        ? Math.floor(percent)
        : undefined,
    messages,
    resetRequired,
  };
}

/**
 * A firmware update on one BMC. Sends at most one update per call of `update`;
 * reads never act.
 */
export class RedfishFirmwareUpdater {
  constructor(
    private readonly client: RedfishClient,
    private readonly options: { deadlineMs?: number } = {},
  ) {}

  private async within<T>(
    what: string,
    work: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const deadline = new Deadline(
      this.options.deadlineMs ?? DEFAULT_FIRMWARE_READ_DEADLINE_MS,
      `${what} of Redfish BMC ${this.client.origin}`,
    );
    try {
      return await work(deadline.signal);
    } finally {
      deadline.clear();
    }
  }

  private async updateService(signal: AbortSignal): Promise<Json | undefined> {
    const root = await this.client.get('/redfish/v1', { signal });
    const path = link(root, 'UpdateService');
    if (typeof path !== 'string') return undefined;
    try {
      return await this.client.get(path, { signal });
    } catch (error) {
      if (error instanceof RedfishError && error.status === 404)
        return undefined;
      throw error;
    }
  }

  /** How the BMC takes an update; undefined when it has no UpdateService or neither way. */
  async offer(): Promise<RedfishFirmwareOffer | undefined> {
    return this.within('the UpdateService reading', async signal => {
      const service = await this.updateService(signal);
      if (!service || service.ServiceEnabled === false) return undefined;
      return offerOf(service);
    });
  }

  /**
   * The FirmwareInventory: every member's Id, Name and Version (at most 64 members, each
   * string cut), read within one deadline. Throws when the BMC offers none.
   */
  async inventory(): Promise<FirmwareComponent[]> {
    return this.within('the FirmwareInventory reading', async signal => {
      const service = await this.updateService(signal);
      const path = link(service, 'FirmwareInventory');
      if (typeof path !== 'string') {
        throw new RedfishError({
          bmc: this.client.origin,
          outcome: 'refused',
          message: `Redfish BMC ${this.client.origin}: no FirmwareInventory (no UpdateService, or it links none)`,
        });
      }
      const collection = await this.client.get(path, {
        signal,
        maxBytes: REDFISH_BODY_LIMITS.collectionPage,
      });
      const members: unknown[] = Array.isArray(collection.Members)
        ? collection.Members.slice(0, HEALTH_LIMITS.firmware)
        : [];
      const components: FirmwareComponent[] = [];
      for (const member of members) {
        let item = (member ?? {}) as Json;
        if (
          item.Version === undefined &&
          typeof item['@odata.id'] === 'string'
        ) {
          item = await this.client.get(item['@odata.id'], { signal });
        }
        const id = item['@odata.id'] ?? item.Id;
        if (typeof id !== 'string' || id === '') continue;
        components.push({
          id: clip(id, HEALTH_LIMITS.firmwareName),
          name: clip(item.Name ?? item.Id ?? '', HEALTH_LIMITS.firmwareName),
          version: clip(item.Version ?? '', HEALTH_LIMITS.firmwareVersion),
        });
      }
      return components;
    });
  }

  /**
   * Sends the update once: SimpleUpdate with the image URI when the BMC offers it, else a
   * multipart push of `image` (which the caller fetched from an allowed source; without
   * it, nothing is sent). `beforePost` is asked right before the POST leaves.
   */
  async update(
    request: FirmwareRequest,
    options: {
      beforePost?: () => void;
      image?: () => Promise<FirmwareImage>;
      /**
       * The image source's credentials (Redfish's SimpleUpdate Username and Password), from
       * the Secret the chart names; never from the request.
       */
      sourceCredentials?: { username: string; password: string };
    } = {},
  ): Promise<FirmwareUpdateAccepted> {
    const offer = await this.offer().catch(error => {
      throw asNotSent(error);
    });
    if (!offer) {
      throw new RedfishError({
        bmc: this.client.origin,
        outcome: 'notSent',
        message: `Redfish BMC ${this.client.origin}: no UpdateService offering SimpleUpdate or a multipart push`,
      });
    }
    const targets = request.targets?.length ? { Targets: request.targets } : {};
    const applyTime = request.applyTime
      ? { '@Redfish.OperationApplyTime': request.applyTime }
      : {};
    let answer;
    if (offer.kind === 'simpleUpdate') {
      answer = await this.client.postAction(
        offer.target,
        {
          ImageURI: request.imageURI,
          TransferProtocol: 'HTTPS',
          ...(options.sourceCredentials
            ? {
                Username: options.sourceCredentials.username,
                Password: options.sourceCredentials.password,
              }
            : {}),
          ...targets,
          ...applyTime,
        },
        { beforePost: options.beforePost },
      );
    } else {
      if (!options.image) {
        throw new RedfishError({
          bmc: this.client.origin,
          outcome: 'notSent',
          message: `Redfish BMC ${this.client.origin}: it takes only a multipart push, and no image was fetched for it`,
        });
      }
      const image = await options.image().catch(error => {
        throw new RedfishError({
          bmc: this.client.origin,
          outcome: 'notSent',
          message: `Redfish BMC ${
            this.client.origin
          }: the image for the multipart push could not be fetched: ${
            (error as Error).message
          }`,
          cause: error,
        });
      });
      answer = await this.client.postAction(
        offer.uri,
        multipartUpdateBody({ ...targets, ...applyTime }, image),
        { beforePost: options.beforePost },
      );
    }
    const body = (answer.body ?? {}) as Json;
    const taskUri =
      answer.location ??
      (typeof body.TaskMonitor === 'string' ? body.TaskMonitor : undefined) ??
      (typeof body['@odata.id'] === 'string' ? body['@odata.id'] : undefined);
    if (!taskUri) {
      // Accepted, but nothing to follow: the caller judges by the inventory alone.
      return { how: offer.kind, taskUri: '', status: answer.status };
    }
    return {
      how: offer.kind,
      taskUri: clip(taskUri, 512),
      status: answer.status,
    };
  }

  /** One bounded look at the task (its monitor answers 202 while it runs). */
  async task(taskUri: string): Promise<FirmwareTaskReading> {
    return this.within('the firmware task reading', async signal => {
      const answer = await this.client.getMonitor(taskUri, { signal });
      return readTask(answer.body, answer.status);
    });
  }
}

/** How an UpdateService takes an update: SimpleUpdate first, a multipart push else. */
export function offerOf(
  service: Record<string, any>,
): RedfishFirmwareOffer | undefined {
  const action = service.Actions?.['#UpdateService.SimpleUpdate'];
  if (typeof action?.target === 'string') {
    const support =
      action['@Redfish.OperationApplyTimeSupport']?.SupportedValues;
    return {
      kind: 'simpleUpdate',
      target: action.target,
      applyTimes: Array.isArray(support)
        ? support.filter((v: unknown): v is string => typeof v === 'string')
        : undefined,
    };
  }
  if (typeof service.MultipartHttpPushUri === 'string') {
    return { kind: 'multipartPush', uri: service.MultipartHttpPushUri };
  }
  return undefined;
}

function asNotSent(error: unknown): unknown {
  if (!(error instanceof RedfishError) || error.outcome === 'notSent')
    return error;
  return new RedfishError({
    bmc: error.bmc,
    status: error.status,
    outcome: 'notSent',
    message: error.message,
    cause: error.cause,
  });
}
