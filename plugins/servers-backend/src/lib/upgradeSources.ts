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
  parseFirmwareSource,
  whyFirmwareSourceRefused,
  whyUpgradeImageRefused,
} from '@rackside/plugin-servers-common';

/** What an upgrade and a firmware update may install; both empty unless configured. */
export interface UpgradeSources {
  /** `servers.upgrades.talosImages`: installer image prefixes (imageAllowed). */
  talosImages: readonly string[];
  /** `servers.upgrades.firmwareSources`: https origins (whyFirmwareSourceRefused). */
  firmwareSources: readonly string[];
}

/** Nothing allowed: every upgrade and firmware update is refused, naming the empty list. */
export const NO_UPGRADE_SOURCES: UpgradeSources = {
  talosImages: [],
  firmwareSources: [],
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
    firmwareSources: readList(
      config,
      'servers.upgrades.firmwareSources',
      entry => parseFirmwareSource(entry) !== undefined,
      'is not an https origin: https://host[:port] and nothing else (no user info, path or query), e.g. https://firmware.plant.example',
    ),
  };
}

/** What a request installs: a Talos image, or a firmware image's URI (or neither). */
export interface InstallRequest {
  upgrade?: { image: string };
  firmware?: { imageURI: string };
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
}
