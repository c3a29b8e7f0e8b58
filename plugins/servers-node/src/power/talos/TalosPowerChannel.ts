import { status as GrpcStatus } from '@grpc/grpc-js';
import {
  channelCapabilities,
  PowerChannelError,
  type PowerChannel,
  type PowerChannelVerb,
  type PowerFailureOutcome,
  type PowerNode,
  type PowerUpgradeRequest,
  type PowerVerbReceipt,
} from '../types';
import { parseTalosconfig, type Talosconfig } from './talosconfig';
import {
  TalosApiClient,
  TalosApiError,
  type TalosApiClientOptions,
} from './TalosApiClient';

export interface TalosPowerChannelOptions {
  /** The cluster's talosconfig: its text, or already parsed. */
  talosconfig: string | Talosconfig;
  /** Context of the talosconfig to use; default its current context. */
  context?: string;
  /** Deadline of each call; default 10 s. */
  timeoutMs?: number;
  /** @internal tests: replace TLS (see TalosApiClientOptions). */
  clientOptions?: TalosApiClientOptions;
}

/** The machine answered with a status: it decided and did not act. */
const ANSWERED = new Set<number>([
  GrpcStatus.INVALID_ARGUMENT,
  GrpcStatus.NOT_FOUND,
  GrpcStatus.ALREADY_EXISTS,
  GrpcStatus.PERMISSION_DENIED,
  GrpcStatus.RESOURCE_EXHAUSTED,
  GrpcStatus.FAILED_PRECONDITION,
  GrpcStatus.ABORTED,
  GrpcStatus.OUT_OF_RANGE,
  GrpcStatus.UNIMPLEMENTED,
  GrpcStatus.UNAUTHENTICATED,
]);

/**
 * How sure we are the machine did not act. A deadline, a dropped connection or a broken
 * answer leaves it open (the verb may have run); only the caller's observation settles it.
 */
export function talosFailureOutcome(error: unknown): PowerFailureOutcome {
  if (!(error instanceof TalosApiError)) return 'unknown';
  if (error.notSent) return 'notSent';
  return ANSWERED.has(error.code) ? 'refused' : 'unknown';
}

/**
 * The talos power channel: Reboot and Shutdown over the machine API with the cluster's
 * talosconfig (mTLS), each after checking the SMBIOS UUID at the address is the Node's,
 * and the boot ID. It cannot power on or see a dark machine.
 * One gRPC channel per machine address, kept until `close()`.
 */
export class TalosPowerChannel implements PowerChannel {
  readonly type = 'talos' as const;
  readonly capabilities = channelCapabilities('talos');
  private readonly config: Talosconfig;
  private readonly options: TalosPowerChannelOptions;
  private readonly clients = new Map<string, TalosApiClient>();

  constructor(options: TalosPowerChannelOptions) {
    this.options = options;
    this.config =
      typeof options.talosconfig === 'string'
        ? parseTalosconfig(options.talosconfig, { context: options.context })
        : options.talosconfig;
  }

  async reboot(node: PowerNode): Promise<PowerVerbReceipt> {
    return this.verb(node, 'reboot', client => client.reboot());
  }

  async shutdown(node: PowerNode): Promise<PowerVerbReceipt> {
    return this.verb(node, 'shutdown', client => client.shutdown());
  }

  /** Upgrade to `request.image`, after the same identity check as a reboot. */
  async upgrade(
    node: PowerNode,
    request: PowerUpgradeRequest,
  ): Promise<PowerVerbReceipt> {
    return this.verb(node, 'upgrade', client =>
      client.upgrade({
        image: request.image,
        stage: request.stage,
        force: request.force,
      }),
    );
  }

  /**
   * The Talos version the machine runs (its Version tag), read after the same identity
   * check as a verb, so the answer is the Node's machine and not whatever took its address.
   */
  async talosVersion(node: PowerNode): Promise<string> {
    const what = 'read the Talos version of';
    const client = this.clientFor(node, what);
    await this.checkIdentity(node, 'version read', client);
    try {
      const { tag } = await client.version();
      if (!tag) throw new Error('the Version answer names no tag');
      return tag;
    } catch (error) {
      throw this.failure(node, what, client, error);
    }
  }

  async bootId(node: PowerNode): Promise<string> {
    const client = this.clientFor(node, 'read the boot ID of');
    try {
      return await client.bootId();
    } catch (error) {
      throw this.failure(node, 'read the boot ID of', client, error);
    }
  }

  async close(): Promise<void> {
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }

  /**
   * A verb goes only to the machine that is the node (docs/architecture.md, "Power channels"): the SMBIOS UUID served
   * at the node's address must be the Node's system UUID. An address another machine has
   * taken (a new DHCP lease, a swapped cable) is refused before anything is sent.
   */
  private async checkIdentity(
    node: PowerNode,
    verb: PowerChannelVerb | 'upgrade' | 'version read',
    client: TalosApiClient,
  ): Promise<void> {
    const refuse = (why: string, cause?: unknown) =>
      new PowerChannelError({
        channel: 'talos',
        node: node.name,
        outcome: 'notSent',
        message: `talos: ${verb} of node ${node.name} not sent: ${why}`,
        cause,
      });
    const expected = node.systemUUID?.trim().toLowerCase();
    if (!expected) {
      throw refuse(
        `the Node reports no system UUID, so the machine at ${client.endpoint.authority} cannot be checked to be it`,
      );
    }
    let served: string;
    try {
      served = await client.systemUUID();
    } catch (error) {
      const reason =
        error instanceof TalosApiError
          ? `${GrpcStatus[error.code] ?? error.code}: ${error.details}`
          : (error as Error).message;
      throw refuse(
        `the SMBIOS UUID at ${client.endpoint.authority} could not be read to check it is this node (${reason})`,
        error,
      );
    }
    if (served !== expected) {
      throw refuse(
        `the machine at ${client.endpoint.authority} has SMBIOS UUID ${served}, not the Node's system UUID ${expected}: the address belongs to another machine`,
      );
    }
  }

  private async verb(
    node: PowerNode,
    verb: PowerChannelVerb | 'upgrade',
    send: (client: TalosApiClient) => Promise<{ actorId: string }>,
  ): Promise<PowerVerbReceipt> {
    const client = this.clientFor(node, verb);
    await this.checkIdentity(node, verb, client);
    try {
      const { actorId } = await send(client);
      return {
        channel: 'talos',
        verb,
        node: node.name,
        acceptedAt: new Date().toISOString(),
        detail: actorId
          ? `${verb} accepted by ${client.endpoint.authority}, actor ${actorId}`
          : `${verb} accepted by ${client.endpoint.authority}`,
      };
    } catch (error) {
      throw this.failure(node, verb, client, error);
    }
  }

  private clientFor(node: PowerNode, what: string): TalosApiClient {
    if (!node.address) {
      throw new PowerChannelError({
        channel: 'talos',
        node: node.name,
        outcome: 'notSent',
        message: `talos: cannot ${what} node ${node.name}: it has no InternalIP to reach its Talos API`,
      });
    }
    let client = this.clients.get(node.address);
    if (!client) {
      client = new TalosApiClient(
        node.address,
        { mode: 'mtls', identity: this.config.identity },
        { timeoutMs: this.options.timeoutMs, ...this.options.clientOptions },
      );
      this.clients.set(node.address, client);
    }
    return client;
  }

  private failure(
    node: PowerNode,
    what: string,
    client: TalosApiClient,
    error: unknown,
  ): PowerChannelError {
    const reason =
      error instanceof TalosApiError
        ? `${GrpcStatus[error.code] ?? error.code}: ${error.details}`
        : (error as Error).message;
    return new PowerChannelError({
      channel: 'talos',
      node: node.name,
      outcome: talosFailureOutcome(error),
      code: error instanceof TalosApiError ? error.code : undefined,
      message: `talos: ${what} node ${node.name} at ${client.endpoint.authority} failed: ${reason}`,
      cause: error,
    });
  }
}
