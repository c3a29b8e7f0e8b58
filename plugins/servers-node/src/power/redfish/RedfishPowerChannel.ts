import { createHash } from 'node:crypto';
import {
  channelCapabilities,
  PowerChannelError,
  type FirmwareTaskReading,
  type ObservedPowerState,
  type PowerFirmwareComponent,
  type PowerFirmwareRequest,
  type PowerChannel,
  type PowerChannelVerb,
  type PowerNode,
  type PowerVerbReceipt,
} from '../types';
import { RedfishError } from './errors';
import { BmcRateLimiter } from './rateLimit';
import {
  fetchFirmwareImage,
  firmwareImageChecksum,
  sha256Of,
  type FirmwareImageFetchOptions,
  type FirmwareSourceCredentials,
} from './firmwareImage';
import { RedfishFirmwareUpdater, type FirmwareImage } from './firmwareUpdate';
import { BmcHealthReader } from './readHealth';
import {
  RedfishClient,
  type RedfishCredentials,
  type RedfishTlsOptions,
} from './RedfishClient';

/** How to reach one node's BMC (the operator builds it from the ServerBMC and its Secret). */
export interface RedfishBmcTarget {
  /** Base URL of the BMC, e.g. `https://10.0.5.21`. */
  address: string;
  /** The node's ComputerSystem; absent: the system whose UUID is the node's system UUID. */
  systemPath?: string;
  credentials: RedfishCredentials;
}

export interface RedfishPowerChannelOptions {
  /** The BMC of a node. Throw (any error) when the node has none. */
  resolveBmc(node: PowerNode): Promise<RedfishBmcTarget> | RedfishBmcTarget;
  /** How BMC certificates are checked: a CA bundle, or insecureSkipVerify set on purpose. */
  tls: RedfishTlsOptions;
  /** Minimum time between two requests to one BMC host; default 200 ms. */
  minIntervalMs?: number;
  /** Deadline of each request; default 15 s. */
  timeoutMs?: number;
  /**
   * Asked right before each verb's Reset POST, after its reads, login and rate-limit wait:
   * throws when this process may no longer act (the operator lost its leadership). The
   * verb is then not sent.
   */
  mayAct?: () => void;
  /**
   * Fetches a firmware image for a BMC that takes only a multipart push (the operator has
   * checked its source first); default: a bounded GET (fetchFirmwareImage).
   */
  fetchImage?: (
    imageURI: string,
    options: FirmwareImageFetchOptions,
  ) => Promise<FirmwareImage>;
  /**
   * The credentials of a firmware source (its https origin), read when the channel acts
   * (docs/upgrades.md, "Credentials for a source"); undefined: the source takes none.
   * Sent as SimpleUpdate's Username/Password and as basic auth of the channel's own fetch.
   */
  sourceCredentials?: (
    origin: string,
  ) => Promise<FirmwareSourceCredentials | undefined>;
  /** PEM CA bundle a firmware source's certificate is checked against (else the system's). */
  sourceCaBundle?: string;
}

/**
 * The redfish power channel: `#ComputerSystem.Reset` on each node's BMC, PowerState
 * readback. One client (and one session) per BMC and credentials, kept until `close()`;
 * one rate limiter for the channel, so the interval holds per BMC host.
 */
export class RedfishPowerChannel implements PowerChannel {
  readonly type = 'redfish' as const;
  readonly capabilities = channelCapabilities('redfish');
  private readonly options: RedfishPowerChannelOptions;
  private readonly limiter: BmcRateLimiter;
  private readonly clients = new Map<
    string,
    { fingerprint: string; client: RedfishClient }
  >();
  private readonly discovered = new Map<string, string>();
  private readonly healthReaders = new Map<
    string,
    { client: RedfishClient; reader: BmcHealthReader }
  >();

  constructor(options: RedfishPowerChannelOptions) {
    this.options = options;
    this.limiter = new BmcRateLimiter({ minIntervalMs: options.minIntervalMs });
  }

  reboot(node: PowerNode): Promise<PowerVerbReceipt> {
    return this.verb(node, 'reboot');
  }

  shutdown(node: PowerNode): Promise<PowerVerbReceipt> {
    return this.verb(node, 'shutdown');
  }

  forceOff(node: PowerNode): Promise<PowerVerbReceipt> {
    return this.verb(node, 'forceOff');
  }

  powerOn(node: PowerNode): Promise<PowerVerbReceipt> {
    return this.verb(node, 'powerOn');
  }

  async powerState(node: PowerNode): Promise<ObservedPowerState> {
    const { client, systemPath } = await this.locate(
      node,
      'read the power state of',
    );
    try {
      return await client.powerState(systemPath);
    } catch (error) {
      throw this.failure(node, 'read the power state of', error);
    }
  }

  /**
   * The health reader of a node's BMC, on the same client (session, rate limiter, origin
   * checks) as its power verbs; kept per BMC and system, so what it learnt (the chassis,
   * whether the BMC expands collections) saves requests on the next reading.
   */
  async healthReader(node: PowerNode): Promise<BmcHealthReader> {
    const { client, systemPath } = await this.locate(
      node,
      'read the health of',
    );
    const key = `${client.origin}|${systemPath}`;
    const known = this.healthReaders.get(key);
    if (known?.client === client) return known.reader;
    const reader = new BmcHealthReader(client, systemPath);
    this.healthReaders.set(key, { client, reader });
    return reader;
  }

  /**
   * SimpleUpdate (or a multipart push) on the node's BMC, sent once: the leader check
   * right before the POST, as for a Reset. The receipt names the task monitor.
   */
  async firmwareUpdate(
    node: PowerNode,
    request: PowerFirmwareRequest,
  ): Promise<PowerVerbReceipt> {
    const { client } = await this.locate(node, 'update the firmware of');
    const fetchImage = this.options.fetchImage ?? fetchFirmwareImage;
    try {
      const fetchOptions = await this.sourceFetchOptions(request.imageURI);
      const accepted = await new RedfishFirmwareUpdater(client).update(
        request,
        {
          beforePost: this.options.mayAct,
          sourceCredentials: fetchOptions.credentials,
          image: async () => {
            const image = await fetchImage(request.imageURI, fetchOptions);
            // The very bytes uploaded are checked against the checksum asked.
            const got = sha256Of(image.bytes);
            if (request.checksum && got !== request.checksum) {
              throw new Error(
                `the checksum of ${imageShown(
                  request.imageURI,
                )} is ${got}, not ${request.checksum}`,
              );
            }
            return image;
          },
        },
      );
      return {
        channel: 'redfish',
        verb: 'firmware',
        node: node.name,
        acceptedAt: new Date().toISOString(),
        taskUri: accepted.taskUri,
        detail: `${
          accepted.how === 'simpleUpdate' ? 'SimpleUpdate' : 'multipart push'
        } accepted by ${client.origin} (HTTP ${accepted.status})${
          accepted.taskUri ? `, task ${accepted.taskUri}` : ''
        }`,
      };
    } catch (error) {
      throw this.failure(node, 'update the firmware of', error);
    }
  }

  /** How this channel fetches from a firmware source: its credentials and CA bundle. */
  private async sourceFetchOptions(
    imageURI: string,
  ): Promise<FirmwareImageFetchOptions> {
    const origin = new URL(imageURI).origin;
    const credentials = await this.options.sourceCredentials?.(origin);
    return {
      ...(credentials ? { credentials } : {}),
      ...(this.options.sourceCaBundle
        ? { caBundle: this.options.sourceCaBundle }
        : {}),
    };
  }

  /**
   * The image's `sha256:<64 hex>`, fetched by the channel from its source (bounded, with
   * the source's credentials) and hashed as it streams in.
   */
  async firmwareImageChecksum(imageURI: string): Promise<string> {
    return firmwareImageChecksum(
      imageURI,
      await this.sourceFetchOptions(imageURI),
    );
  }

  /** One bounded read of a firmware update's task. */
  async firmwareTask(
    node: PowerNode,
    taskUri: string,
  ): Promise<FirmwareTaskReading> {
    const { client } = await this.locate(node, 'read the firmware task of');
    try {
      return await new RedfishFirmwareUpdater(client).task(taskUri);
    } catch (error) {
      throw this.failure(node, 'read the firmware task of', error);
    }
  }

  /** One bounded read of the BMC's FirmwareInventory. */
  async firmwareInventory(node: PowerNode): Promise<PowerFirmwareComponent[]> {
    const { client } = await this.locate(node, 'read the firmware of');
    try {
      return await new RedfishFirmwareUpdater(client).inventory();
    } catch (error) {
      throw this.failure(node, 'read the firmware of', error);
    }
  }

  /** Whether the node's BMC has an UpdateService that takes an update. */
  async firmwareOffered(node: PowerNode): Promise<boolean> {
    const { client } = await this.locate(node, 'read the UpdateService of');
    try {
      return (await new RedfishFirmwareUpdater(client).offer()) !== undefined;
    } catch (error) {
      throw this.failure(node, 'read the UpdateService of', error);
    }
  }

  async close(): Promise<void> {
    this.healthReaders.clear();
    const clients = [...this.clients.values()];
    this.clients.clear();
    await Promise.all(clients.map(({ client }) => client.close()));
  }

  private async verb(
    node: PowerNode,
    verb: PowerChannelVerb,
  ): Promise<PowerVerbReceipt> {
    const { client, systemPath } = await this.locate(node, verb);
    try {
      const { resetType, status } = await client.reset(systemPath, verb, {
        beforePost: this.options.mayAct,
      });
      return {
        channel: 'redfish',
        verb,
        node: node.name,
        acceptedAt: new Date().toISOString(),
        detail: `ResetType ${resetType} accepted by ${client.origin}${systemPath} (HTTP ${status})`,
      };
    } catch (error) {
      throw this.failure(node, verb, error);
    }
  }

  /** The client and system path of a node's BMC; every failure here is "not sent". */
  private async locate(
    node: PowerNode,
    what: string,
  ): Promise<{ client: RedfishClient; systemPath: string }> {
    try {
      const target = await this.options.resolveBmc(node);
      const client = this.clientFor(target);
      const systemPath =
        target.systemPath ?? (await this.discover(node, target, client));
      return { client, systemPath };
    } catch (error) {
      if (error instanceof PowerChannelError) throw error;
      throw this.failure(node, what, error, 'notSent');
    }
  }

  private async discover(
    node: PowerNode,
    target: RedfishBmcTarget,
    client: RedfishClient,
  ): Promise<string> {
    if (!node.systemUUID) {
      throw new PowerChannelError({
        channel: 'redfish',
        node: node.name,
        outcome: 'notSent',
        message: `redfish: node ${node.name} has no system path on its BMC and no system UUID to find it by`,
      });
    }
    const key = `${client.origin}|${node.systemUUID.toLowerCase()}`;
    const known = this.discovered.get(key);
    if (known) return known;
    const path = await client.findSystemByUuid(node.systemUUID);
    if (!path) {
      throw new PowerChannelError({
        channel: 'redfish',
        node: node.name,
        outcome: 'notSent',
        message: `redfish: BMC ${target.address} has no system with UUID ${node.systemUUID} (node ${node.name})`,
      });
    }
    this.discovered.set(key, path);
    return path;
  }

  /** One client per BMC origin; new credentials replace it (and end its session). */
  private clientFor(target: RedfishBmcTarget): RedfishClient {
    const fingerprint = createHash('sha256')
      .update(target.credentials.username)
      .update('\0')
      .update(target.credentials.password)
      .digest('hex');
    const key = target.address.replace(/\/+$/, '');
    const existing = this.clients.get(key);
    if (existing?.fingerprint === fingerprint) return existing.client;
    const client = new RedfishClient({
      address: target.address,
      credentials: target.credentials,
      tls: this.options.tls,
      rateLimiter: this.limiter,
      timeoutMs: this.options.timeoutMs,
    });
    if (existing) void existing.client.close();
    this.clients.set(key, { fingerprint, client });
    return client;
  }

  private failure(
    node: PowerNode,
    what: string,
    error: unknown,
    outcome?: 'notSent',
  ): PowerChannelError {
    const reason = (error as Error)?.message ?? String(error);
    return new PowerChannelError({
      channel: 'redfish',
      node: node.name,
      outcome:
        outcome ?? (error instanceof RedfishError ? error.outcome : 'unknown'),
      code: error instanceof RedfishError ? error.status : undefined,
      message: `redfish: ${what} node ${node.name} failed: ${reason}`,
      cause: error,
    });
  }
}

/** An image URI as a message shows it: origin and path, never a query. */
function imageShown(imageURI: string): string {
  const url = new URL(imageURI);
  return `${url.origin}${url.pathname}`;
}
