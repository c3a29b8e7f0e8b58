/*
 * `servers.upgrades` in app-config (docs/upgrades.md, "Allowing sources"): the Talos
 * installer image prefixes and the https origins of firmware images that the backend
 * lets a request name. Read once at start-up; an entry the rules of servers-common
 * (upgradeSources.ts, firmwareSources.ts) cannot read stops the backend, naming it, so a
 * typo never leaves a list that silently allows nothing (or something else).
 */
import type { Config } from '@backstage/config';
import { InputError } from '@backstage/errors';
import {
  isImagePrefix,
  parseFirmwareSourceEntry,
  whyFirmwareChecksumMissing,
  whyFirmwareSourceRefused,
  whyUpgradeImageRefused,
} from '@rackside/plugin-servers-common';

/** What an upgrade and a firmware update may install; both empty unless configured. */
export interface UpgradeSources {
  /** `servers.upgrades.talosImages`: installer image prefixes (imageAllowed). */
  talosImages: readonly string[];
  /** `servers.upgrades.firmwareSources`: https origins (whyFirmwareSourceRefused). */
  firmwareSources: readonly string[];
  /**
   * Those of them written `{origin, checksumRequired: true}`: a request for an image from
   * them without a checksum is refused (whyFirmwareChecksumMissing).
   */
  firmwareChecksumRequired?: readonly string[];
}

/** Nothing allowed: every upgrade and firmware update is refused, naming the empty list. */
export const NO_UPGRADE_SOURCES: UpgradeSources = {
  talosImages: [],
  firmwareSources: [],
  firmwareChecksumRequired: [],
};

/** At most this many entries in each list (the refusal names them all). */
export const MAX_UPGRADE_SOURCES = 64;

function readList(
  config: Config,
  key: string,
  valid: (entry: string) => boolean,
  hint: string,
): string[] {
  const list = config.getOptionalStringArray(key) ?? [];
  if (list.length > MAX_UPGRADE_SOURCES) {
    throw new Error(
      `${key} holds ${list.length} entries; at most ${MAX_UPGRADE_SOURCES}`,
    );
  }
  list.forEach((entry, i) => {
    if (!valid(entry)) {
      throw new Error(
        `${key}[${i}] ${JSON.stringify(entry.slice(0, 200))} ${hint}`,
      );
    }
  });
  return list;
}

/** Reads `servers.upgrades`; throws naming the first entry that is not one. */
export function readUpgradeSources(config: Config): UpgradeSources {
  return {
    talosImages: readList(
      config,
      'servers.upgrades.talosImages',
      isImagePrefix,
      'is not an image prefix: a registry host, then whole repository components, ending with "/" (anything below) or ":" (any tag of that repository), e.g. factory.talos.dev/installer/',
    ),
    ...readFirmwareSources(config),
  };
}

/**
 * `servers.upgrades.firmwareSources`: each entry an origin string, or
 * `{origin, checksumRequired}` (servers-common parseFirmwareSourceEntry).
 */
function readFirmwareSources(
  config: Config,
): Pick<UpgradeSources, 'firmwareSources' | 'firmwareChecksumRequired'> {
  const key = 'servers.upgrades.firmwareSources';
  const raw = config.getOptional(key) ?? [];
  if (!Array.isArray(raw)) {
    throw new Error(`${key} is not a list`);
  }
  if (raw.length > MAX_UPGRADE_SOURCES) {
    throw new Error(
      `${key} holds ${raw.length} entries; at most ${MAX_UPGRADE_SOURCES}`,
    );
  }
  const sources = raw.map((entry, i) => {
    const source = parseFirmwareSourceEntry(entry);
    if (!source) {
      throw new Error(
        `${key}[${i}] ${JSON.stringify(entry)?.slice(
          0,
          200,
        )} is not an https origin: https://host[:port] and nothing else (no user info, path or query), e.g. https://firmware.plant.example, or {origin, checksumRequired} with such an origin`,
      );
    }
    return source;
  });
  return {
    firmwareSources: sources.map(s => s.origin),
    firmwareChecksumRequired: sources
      .filter(s => s.checksumRequired)
      .map(s => s.origin),
  };
}

/**
 * What a request installs: a Talos image, or a firmware image's URI (with its checksum,
 * the version it installs and the components it targets, when given), or neither.
 */
export interface InstallRequest {
  upgrade?: { image: string };
  firmware?: {
    imageURI: string;
    checksum?: string;
    version?: string;
    targets?: readonly string[];
  };
}

/**
 * What an upgrade or a firmware update installs must be in the deployment's lists
 * (`servers.upgrades`): a 400 naming the list, before anything is read of the cluster.
 * One node's request and a plan's ask it alike; the operator asks the same rules again,
 * with its own lists, at the moment it acts.
 */
export function checkInstallSource(
  sources: UpgradeSources,
  request: InstallRequest,
): void {
  const refused = request.upgrade
    ? whyUpgradeImageRefused(request.upgrade.image, sources.talosImages)
    : request.firmware &&
      whyFirmwareSourceRefused(
        request.firmware.imageURI,
        sources.firmwareSources,
      );
  if (refused) {
    throw new InputError(
      `${refused} (${
        request.upgrade
          ? 'servers.upgrades.talosImages'
          : 'servers.upgrades.firmwareSources'
      })`,
    );
  }
  const required = new Set(sources.firmwareChecksumRequired ?? []);
  const noChecksum =
    request.firmware &&
    whyFirmwareChecksumMissing(
      request.firmware,
      sources.firmwareSources.map(origin => ({
        origin,
        checksumRequired: required.has(origin),
      })),
    );
  if (noChecksum) {
    throw new InputError(`${noChecksum} (servers.upgrades.firmwareSources)`);
  }
}
