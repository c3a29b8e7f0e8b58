import {
  Client,
  credentials as grpcCredentials,
  Metadata,
  status as GrpcStatus,
  type ChannelCredentials,
  type ServiceError,
} from '@grpc/grpc-js';
import { createSecureContext } from 'node:tls';
import type { Type } from 'protobufjs';
import { parseTalosEndpoint, type TalosEndpoint } from './endpoint';
import {
  BOOT_ID_PATH,
  method,
  messageType,
  RESET_WIPE_LABELS,
  SYSTEM_INFORMATION,
  type TalosMethod,
} from './protocol';
import type { TalosClientIdentity } from './talosconfig';

/**
 * How to reach one machine:
 * - `mtls`: a configured machine, with a talosconfig's client certificate; the server
 *   certificate must be issued by the talosconfig's CA for the address dialled;
 * - `maintenance`: a machine in maintenance mode. It has a throw-away self-signed
 *   certificate and asks for no client certificate, so there is nothing to verify the
 *   server against: TLS without verification, by design of Talos (talosctl --insecure).
 */
export type TalosConnection =
  | { mode: 'mtls'; identity: TalosClientIdentity }
  | { mode: 'maintenance' };

export interface TalosApiClientOptions {
  /** Deadline of each call; default 10 s. */
  timeoutMs?: number;
  /**
   * Channel credentials to use instead of the TLS the connection mode builds. Only for
   * tests that serve the API in-process without TLS.
   * @internal
   */
  channelCredentials?: ChannelCredentials;
}

/** A gRPC error from a Talos machine, or an error the machine put in a response's metadata. */
export class TalosApiError extends Error {
  /** The gRPC status code. */
  readonly code: number;
  readonly endpoint: string;
  /** The method path, e.g. `/machine.MachineService/Reboot`. */
  readonly method: string;
  /** The text of the status, as the machine or grpc-js wrote it. */
  readonly details: string;

  constructor(options: {
    code: number;
    endpoint: string;
    method: string;
    details: string;
  }) {
    const codeName = GrpcStatus[options.code] ?? String(options.code);
    super(
      `Talos API ${options.endpoint} ${options.method}: ${codeName}: ${options.details}`,
    );
    this.name = 'TalosApiError';
    this.code = options.code;
    this.endpoint = options.endpoint;
    this.method = options.method;
    this.details = options.details;
  }

  /**
   * The call failed before a connection carried it (nothing was sent): grpc-js says
   * "No connection established" for a refused connection or a failed handshake.
   */
  get notSent(): boolean {
    return (
      this.code === GrpcStatus.UNAVAILABLE &&
      /no connection established/i.test(this.details)
    );
  }

  /**
   * A configured machine refused the handshake because we sent no client certificate
   * (TLS 1.3 alert 116, "certificate required").
   */
  get certificateRequired(): boolean {
    return (
      this.code === GrpcStatus.UNAVAILABLE &&
      /certificate required|alert number 116/i.test(this.details)
    );
  }
}

/** What Version reports. */
export interface TalosVersion {
  tag: string;
  sha: string;
  os: string;
  arch: string;
  platform: string;
}

/** What a power verb or Reset answers: Talos acts in the background and names the actor. */
export interface TalosActionAck {
  actorId: string;
}

/** Options of {@link TalosApiClient.upgrade}. */
export interface TalosUpgradeOptions {
  /** The installer image, its tag the version it installs. */
  image: string;
  /** Install it on the next reboot instead of at once. */
  stage?: boolean;
  /** Skip Talos's etcd health check before upgrading a control-plane member. */
  force?: boolean;
}

/** One etcd member, as EtcdMemberList reports it. */
export interface TalosEtcdMember {
  /** The member ID (uint64, in decimal). */
  id: string;
  hostname: string;
  peerUrls: string[];
  clientUrls: string[];
  isLearner: boolean;
}

/** What ApplyConfiguration answers. */
export interface TalosApplyResult {
  /** The mode the machine applied the configuration in (e.g. REBOOT for an install). */
  mode: string;
  modeDetails: string;
  warnings: string[];
}

/** Options of {@link TalosApiClient.reset}. */
export interface TalosResetOptions {
  /** Leave etcd and drain first; default true. */
  graceful?: boolean;
  /** Reboot afterwards (into maintenance mode); default true. */
  reboot?: boolean;
  /** System partitions to wipe; default STATE and EPHEMERAL. */
  wipeLabels?: readonly string[];
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** Response objects as plain JS: 64-bit integers and enums as strings, absent fields as defaults. */
const TO_OBJECT = {
  longs: String,
  enums: String,
  bytes: Buffer,
  defaults: true,
  arrays: true,
} as const;

type Plain = Record<string, any>;

/** The request of a method, as gRPC sends it. */
function encoderOf(m: TalosMethod): (value: Plain) => Buffer {
  return value =>
    Buffer.from(m.requestType.encode(m.requestType.fromObject(value)).finish());
}

/** The response of a method, as a {@link Plain} object (see {@link TO_OBJECT}). */
function decoderOf(m: TalosMethod): (bytes: Buffer) => Plain {
  return bytes =>
    m.responseType.toObject(m.responseType.decode(bytes), TO_OBJECT);
}

function tlsCredentials(connection: TalosConnection): ChannelCredentials {
  if (connection.mode === 'maintenance') {
    const context = createSecureContext({ minVersion: 'TLSv1.2' });
    return grpcCredentials.createFromSecureContext(context, {
      rejectUnauthorized: false,
      checkServerIdentity: () => undefined,
    });
  }
  const { ca, crt, key } = connection.identity;
  const context = createSecureContext({
    ca,
    cert: crt,
    key,
    minVersion: 'TLSv1.2',
  });
  // The default check compares the certificate's SANs with the host dialled; Talos puts
  // the machine's addresses there.
  return grpcCredentials.createFromSecureContext(context, {
    rejectUnauthorized: true,
  });
}

/**
 * A client of one Talos machine's API. One instance holds one gRPC channel; `close()`
 * releases it. Every call has a deadline and is sent once (retries are off: a power verb
 * must never be repeated behind the caller's back).
 */
export class TalosApiClient {
  readonly endpoint: TalosEndpoint;
  readonly mode: TalosConnection['mode'];
  private readonly client: Client;
  private readonly timeoutMs: number;

  constructor(
    address: string,
    connection: TalosConnection,
    options: TalosApiClientOptions = {},
  ) {
    this.endpoint = parseTalosEndpoint(address);
    this.mode = connection.mode;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.client = new Client(
      this.endpoint.authority,
      options.channelCredentials ?? tlsCredentials(connection),
      {
        'grpc.enable_retries': 0,
        'grpc.service_config_disable_resolution': 1,
      },
    );
  }

  /** Talos version and platform. Works in maintenance mode too. */
  async version(): Promise<TalosVersion> {
    const reply = await this.unary(
      method('machine.MachineService', 'Version'),
      {},
    );
    const message = this.first(reply, 'Version');
    return {
      tag: message.version?.tag ?? '',
      sha: message.version?.sha ?? '',
      os: message.version?.os ?? '',
      arch: message.version?.arch ?? '',
      platform: message.platform?.name ?? '',
    };
  }

  /** Reboot (mode DEFAULT: a graceful reboot). Talos answers at once and reboots in the background. */
  async reboot(): Promise<TalosActionAck> {
    const reply = await this.unary(method('machine.MachineService', 'Reboot'), {
      mode: 'DEFAULT',
    });
    return { actorId: this.first(reply, 'Reboot').actorId ?? '' };
  }

  /** Shutdown (graceful unless `force`). */
  async shutdown(options: { force?: boolean } = {}): Promise<TalosActionAck> {
    const reply = await this.unary(
      method('machine.MachineService', 'Shutdown'),
      { force: options.force ?? false },
    );
    return { actorId: this.first(reply, 'Shutdown').actorId ?? '' };
  }

  /**
   * Reset for re-use: graceful (leave etcd), reboot into maintenance mode, wipe the STATE
   * and EPHEMERAL system partitions only. The wipe mode is SYSTEM_DISK so no user disk is
   * touched; with partitions named, Talos wipes exactly those.
   */
  async reset(options: TalosResetOptions = {}): Promise<TalosActionAck> {
    const labels = options.wipeLabels ?? RESET_WIPE_LABELS;
    const reply = await this.unary(method('machine.MachineService', 'Reset'), {
      graceful: options.graceful ?? true,
      reboot: options.reboot ?? true,
      systemPartitionsToWipe: labels.map(label => ({ label, wipe: true })),
      mode: 'SYSTEM_DISK',
    });
    return { actorId: this.first(reply, 'Reset').actorId ?? '' };
  }

  /**
   * Upgrade: install `image` and reboot into it, keeping the machine's data (preserve).
   * Talos answers at once and runs the installer in the background; an image that fails
   * to boot is rolled back by Talos to the version it ran.
   */
  async upgrade(options: TalosUpgradeOptions): Promise<TalosActionAck> {
    const reply = await this.unary(
      method('machine.MachineService', 'Upgrade'),
      {
        image: options.image,
        preserve: true,
        stage: options.stage ?? false,
        force: options.force ?? false,
      },
    );
    return { actorId: this.first(reply, 'Upgrade').actorId ?? '' };
  }

  /** Applies a machine configuration; mode AUTO lets Talos decide whether to reboot. */
  async applyConfiguration(
    config: string | Uint8Array,
    options: {
      mode?: 'AUTO' | 'REBOOT' | 'NO_REBOOT' | 'STAGED';
      dryRun?: boolean;
    } = {},
  ): Promise<TalosApplyResult> {
    const data =
      typeof config === 'string' ? Buffer.from(config, 'utf8') : config;
    const reply = await this.unary(
      method('machine.MachineService', 'ApplyConfiguration'),
      { data, mode: options.mode ?? 'AUTO', dryRun: options.dryRun ?? false },
    );
    const message = this.first(reply, 'ApplyConfiguration');
    return {
      mode: message.mode,
      modeDetails: message.modeDetails ?? '',
      warnings: message.warnings ?? [],
    };
  }

  /** The etcd members as this control-plane machine sees them. */
  async etcdMemberList(): Promise<TalosEtcdMember[]> {
    const reply = await this.unary(
      method('machine.MachineService', 'EtcdMemberList'),
      { queryLocal: false },
    );
    const members: Plain[] = this.first(reply, 'EtcdMemberList').members ?? [];
    return members.map(m => ({
      id: String(m.id),
      hostname: m.hostname ?? '',
      peerUrls: m.peerUrls ?? [],
      clientUrls: m.clientUrls ?? [],
      isLearner: Boolean(m.isLearner),
    }));
  }

  /**
   * The SMBIOS system UUID from the COSI resource `SystemInformations.hardware.talos.dev`.
   * Works in maintenance mode too (that is how a new machine is identified).
   */
  async systemUUID(): Promise<string> {
    const spec = await this.cosiSpec(
      SYSTEM_INFORMATION,
      messageType(SYSTEM_INFORMATION.specType),
    );
    const uuid = typeof spec.uuid === 'string' ? spec.uuid.trim() : '';
    if (!uuid) {
      throw new TalosApiError({
        code: GrpcStatus.NOT_FOUND,
        endpoint: this.endpoint.authority,
        method: '/cosi.resource.State/Get',
        details: 'SystemInformation has no uuid',
      });
    }
    return uuid.toLowerCase();
  }

  /** The running kernel's boot ID (`/proc/sys/kernel/random/boot_id` through Read). */
  async bootId(): Promise<string> {
    const text = (
      await this.readFile(
        method('machine.MachineService', 'Read'),
        BOOT_ID_PATH,
      )
    ).trim();
    if (!/^[0-9a-f-]{36}$/i.test(text)) {
      throw new TalosApiError({
        code: GrpcStatus.DATA_LOSS,
        endpoint: this.endpoint.authority,
        method: '/machine.MachineService/Read',
        details: `${BOOT_ID_PATH} did not hold a boot ID`,
      });
    }
    return text.toLowerCase();
  }

  /** Closes the channel. */
  close(): void {
    this.client.close();
  }

  private async cosiSpec(
    ref: { namespace: string; type: string; id: string },
    specType: Type,
  ): Promise<Plain> {
    const reply = await this.unary(method('cosi.resource.State', 'Get'), {
      namespace: ref.namespace,
      type: ref.type,
      id: ref.id,
      options: {},
    });
    const protoSpec: Buffer | undefined = reply.resource?.spec?.protoSpec;
    if (!protoSpec || protoSpec.length === 0) {
      throw new TalosApiError({
        code: GrpcStatus.NOT_FOUND,
        endpoint: this.endpoint.authority,
        method: '/cosi.resource.State/Get',
        details: `${ref.type} ${ref.id} came without a protobuf spec`,
      });
    }
    return specType.toObject(specType.decode(protoSpec), TO_OBJECT);
  }

  /** The one message of a one-machine reply; an error apid put in its metadata becomes a throw. */
  private first(reply: Plain, name: string): Plain {
    const message = reply.messages?.[0];
    if (!message) {
      throw new TalosApiError({
        code: GrpcStatus.INTERNAL,
        endpoint: this.endpoint.authority,
        method: `/machine.MachineService/${name}`,
        details: 'empty response',
      });
    }
    this.checkMetadata(message.metadata, `/machine.MachineService/${name}`);
    return message;
  }

  private checkMetadata(metadata: Plain | undefined, path: string): void {
    if (metadata?.error) {
      throw new TalosApiError({
        code: metadata.status?.code || GrpcStatus.UNKNOWN,
        endpoint: this.endpoint.authority,
        method: path,
        details: metadata.error,
      });
    }
  }

  private deadline(): Date {
    return new Date(Date.now() + this.timeoutMs);
  }

  private wrap(path: string, error: ServiceError): TalosApiError {
    return new TalosApiError({
      code: error.code ?? GrpcStatus.UNKNOWN,
      endpoint: this.endpoint.authority,
      method: path,
      details: error.details || error.message,
    });
  }

  private unary(m: TalosMethod, request: Plain): Promise<Plain> {
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(
        m.path,
        encoderOf(m),
        decoderOf(m),
        request,
        new Metadata(),
        { deadline: this.deadline() },
        (error, value) => {
          if (error) reject(this.wrap(m.path, error));
          else resolve(value ?? {});
        },
      );
    });
  }

  private readFile(m: TalosMethod, path: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let settled = false;
      const settle = (finish: () => void) => {
        if (!settled) {
          settled = true;
          finish();
        }
      };
      const call = this.client.makeServerStreamRequest(
        m.path,
        encoderOf(m),
        decoderOf(m),
        { path },
        new Metadata(),
        { deadline: this.deadline() },
      );
      call.on('data', (data: Plain) => {
        try {
          this.checkMetadata(data.metadata, m.path);
          if (data.bytes?.length) chunks.push(Buffer.from(data.bytes));
        } catch (error) {
          settle(() => reject(error));
          call.cancel();
        }
      });
      call.on('error', (error: ServiceError) =>
        settle(() => reject(this.wrap(m.path, error))),
      );
      call.on('end', () =>
        settle(() => resolve(Buffer.concat(chunks).toString('utf8'))),
      );
    });
  }
}
