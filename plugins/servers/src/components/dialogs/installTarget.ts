/*
 * What an upgrade or a firmware update installs, as the dialog builds it from an allowed
 * source and what the person types after it (docs/upgrades.md, "Allowing sources"). The
 * checks are servers-common's rules, the ones the backend and the operator apply again.
 */
import {
  firmwareAlreadyAt,
  talosVersionOfImage,
  whyFirmwareChecksumMissing,
  whyFirmwareChecksumRefused,
  whyFirmwareSourceRefused,
  whyUpgradeImageRefused,
  type ActionRequestBody,
  type PreflightVersions,
  type UpgradeSourcesResponse,
} from '@rackside/plugin-servers-common';

/** The actions that install something on the server. */
export type InstallAction = 'upgrade' | 'firmware';

export function isInstallAction(action: string): action is InstallAction {
  return action === 'upgrade' || action === 'firmware';
}

/** When a BMC applies an update (`spec.firmware.applyTime`). */
export type FirmwareApplyTime = 'Immediate' | 'OnReset';

/** What the person chose in the dialog. */
export interface InstallDraft {
  /** One of the allowed sources (an image prefix, or an https origin). */
  source: string;
  /** What follows it: a tag or `repository:tag` for an image, a path for firmware. */
  rest: string;
  /** Firmware only. */
  applyTime: FirmwareApplyTime;
  /**
   * Firmware only: the version the image installs, as the BMC's FirmwareInventory will
   * report it (`spec.firmware.version`); empty for none.
   */
  version: string;
  /** Firmware only: `sha256:` and 64 lowercase hex digits (`spec.firmware.checksum`); empty for none. */
  checksum: string;
  /**
   * Firmware only: the ids (`@odata.id`) of the components checked, as the BMC's reading
   * lists them (`spec.firmware.targets`); none: the BMC picks.
   */
  targets: string[];
}

/** A draft with nothing chosen yet. */
export const EMPTY_INSTALL_DRAFT: InstallDraft = {
  source: '',
  rest: '',
  applyTime: 'Immediate',
  version: '',
  checksum: '',
  targets: [],
};

/** The allowed sources of an action. */
export function sourcesOf(
  action: InstallAction,
  sources: UpgradeSourcesResponse | undefined,
): string[] {
  if (!sources) return [];
  return action === 'upgrade' ? sources.talosImages : sources.firmwareSources;
}

/** Whether a request for an image from a firmware source must carry a checksum. */
export function checksumRequiredBy(
  source: string,
  sources: UpgradeSourcesResponse | undefined,
): boolean {
  return !!sources?.firmwareChecksumRequired?.includes(source);
}

/**
 * The draft with a source that is allowed: the one chosen, or the first allowed (the
 * list changed, or nothing was chosen yet).
 */
export function withAllowedSource(
  draft: InstallDraft,
  allowed: readonly string[],
): InstallDraft {
  return allowed.includes(draft.source)
    ? draft
    : { ...draft, source: allowed[0] ?? '' };
}

/**
 * The installer image a prefix and a tag make: a prefix ending with `:` or `/` is
 * followed directly (`…/installer:` + `v1.12.0`, `…/installer/` + `<schematic>:v1.12.0`);
 * a prefix naming one whole repository takes the tag after a `:`.
 */
export function imageOf(prefix: string, rest: string): string {
  const tail = rest.trim();
  if (prefix.endsWith(':') || prefix.endsWith('/')) return `${prefix}${tail}`;
  return `${prefix}:${tail}`;
}

/** The firmware image URI an origin and a path make (`https://fw.example` + `/bios.bin`). */
export function imageUriOf(origin: string, rest: string): string {
  const base = origin.replace(/\/+$/, '');
  const path = rest.trim();
  return `${base}${path.startsWith('/') ? '' : '/'}${path}`;
}

/** What the person types after the source, as the field's hint says it. */
export function restHint(action: InstallAction, source: string): string {
  if (action === 'firmware') return 'The image path, e.g. /bios/2.20.0.bin';
  return source.endsWith('/')
    ? 'The repository and version below it, e.g. <schematic>:v1.12.0'
    : 'The version, e.g. v1.12.0';
}

/** The target of the request, its body fields and the version it installs (upgrade). */
export type InstallTarget =
  | {
      ok: true;
      /** The fields the action body adds. */
      body: InstallBody;
      /** The whole image or URI, as the dialog shows it. */
      shown: string;
      /** An upgrade's Talos version (the image's tag), or the firmware version typed. */
      version?: string;
    }
  | {
      ok: false;
      /** Why the source and path are refused (shown under the path). */
      why?: string;
      /** Why the checksum is refused or missing (shown under the checksum). */
      checksumWhy?: string;
    };

/** The fields an upgrade or a firmware update adds to the action's body. */
export type InstallBody = Pick<
  ActionRequestBody,
  'image' | 'imageURI' | 'applyTime' | 'version' | 'checksum' | 'targets'
>;

/** A firmware component the person may check: its id, name and the versions read. */
export interface FirmwareComponentChoice {
  /** Its `@odata.id` as the BMC's reading gave it; absent: it cannot be targeted. */
  id?: string;
  name: string;
  /** The versions the readings report for it (one per distinct value). */
  versions: string[];
}

/**
 * The components the Components choice offers: every component of the readings (one
 * server's, or the union of a plan's servers'), one per id (a component without an id
 * once per name), in the order first read.
 */
export function firmwareChoicesOf(
  readings: ReadonlyArray<PreflightVersions['firmware']>,
): FirmwareComponentChoice[] {
  const choices = new Map<string, FirmwareComponentChoice>();
  for (const reading of readings) {
    for (const c of reading ?? []) {
      const key = c.id !== undefined ? `id:${c.id}` : `name:${c.name}`;
      const seen = choices.get(key);
      if (!seen) {
        choices.set(key, {
          ...(c.id !== undefined ? { id: c.id } : {}),
          name: c.name,
          versions: [c.version],
        });
      } else if (!seen.versions.includes(c.version)) {
        seen.versions.push(c.version);
      }
    }
  }
  return [...choices.values()];
}

/**
 * The choices seen so far with those of new readings: a plan's Components choice keeps
 * what earlier pre-flights listed while the next one loads or after it skips a server
 * (a checked component must not vanish from the choice, nor from the targets, because
 * the pre-flight it shaped was taken again).
 */
export function withFirmwareChoices(
  seen: readonly FirmwareComponentChoice[],
  readings: ReadonlyArray<PreflightVersions['firmware']>,
): FirmwareComponentChoice[] {
  return firmwareChoicesOf([
    seen.flatMap(c =>
      c.versions.map(version => ({
        ...(c.id !== undefined ? { id: c.id } : {}),
        name: c.name,
        version,
      })),
    ),
    ...readings,
  ]);
}

/**
 * The targets a request carries: the checked ids that the readings list, exactly as
 * read; anything else (an id no reading lists now, text from elsewhere) is never sent.
 */
export function targetsOf(
  checked: readonly string[],
  choices: readonly FirmwareComponentChoice[],
): string[] {
  const listed = new Set(
    choices.flatMap(c => (c.id !== undefined ? [c.id] : [])),
  );
  return checked.filter(id => listed.has(id));
}

/**
 * Why the typed checksum is refused, by servers-common's rule (the backend's and the
 * CRD's): only once something is typed, so an empty field is not shown in error.
 */
export function checksumErrorOf(draft: InstallDraft): string | undefined {
  const typed = draft.checksum.trim();
  return typed ? whyFirmwareChecksumRefused(typed) : undefined;
}

/**
 * The target a draft makes, or why it is not one yet (nothing typed: no why) or not
 * allowed (the sentence of servers-common's rule, as the backend would answer).
 */
export function installTargetOf(
  action: InstallAction,
  draft: InstallDraft,
  allowed: readonly string[],
  sources?: UpgradeSourcesResponse,
  /** Firmware: the components offered; only the checked ones among them are targets. */
  components: readonly FirmwareComponentChoice[] = [],
): InstallTarget {
  if (!draft.source || draft.rest.trim() === '') {
    return { ok: false, checksumWhy: checksumErrorOf(draft) };
  }
  if (action === 'upgrade') {
    const image = imageOf(draft.source, draft.rest);
    const why = whyUpgradeImageRefused(image, allowed);
    if (why) return { ok: false, why };
    return {
      ok: true,
      body: { image },
      shown: image,
      version: talosVersionOfImage(image),
    };
  }
  const imageURI = imageUriOf(draft.source, draft.rest);
  const why = whyFirmwareSourceRefused(imageURI, allowed);
  if (why) return { ok: false, why, checksumWhy: checksumErrorOf(draft) };
  const version = draft.version.trim();
  const checksum = draft.checksum.trim();
  // The backend's rule: a checksum that is not sha256:<64 lowercase hex>, or none for a
  // source that requires one (the sources the backend says require it).
  const checksumWhy = whyFirmwareChecksumMissing(
    { imageURI, ...(checksum ? { checksum } : {}) },
    (sources?.firmwareChecksumRequired ?? []).map(origin => ({
      origin,
      checksumRequired: true,
    })),
  );
  if (checksumWhy) return { ok: false, checksumWhy };
  const targets = targetsOf(draft.targets, components);
  return {
    ok: true,
    body: {
      imageURI,
      // Immediate is the BMC's default: sent only when asked otherwise.
      ...(draft.applyTime === 'OnReset' ? { applyTime: 'OnReset' } : {}),
      ...(version ? { version } : {}),
      ...(checksum ? { checksum } : {}),
      // None checked: no targets, the BMC picks (any component that changes counts).
      ...(targets.length > 0 ? { targets } : {}),
    },
    shown: imageURI,
    ...(version ? { version } : {}),
  };
}

/**
 * Why the request has nothing to do on this node, in the words the backend refuses it
 * with ("already at v1.12.0", "already at 2.5.0"): an upgrade to the Talos version the
 * node runs, or a firmware update to a version every targeted component of the BMC's last
 * reading reports (every component when none is checked: servers-common
 * firmwareAlreadyAt, the backend's rule). Undefined otherwise.
 */
export function alreadyAtTarget(
  action: InstallAction,
  target: InstallTarget,
  versions: PreflightVersions | undefined,
): string | undefined {
  if (!target.ok || !target.version) return undefined;
  if (action === 'upgrade') {
    return versions?.talos === target.version
      ? `already at ${target.version}`
      : undefined;
  }
  return firmwareAlreadyAt(
    target.version,
    versions?.firmware,
    target.body.targets,
  );
}
