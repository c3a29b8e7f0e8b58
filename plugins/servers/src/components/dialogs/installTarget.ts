/*
 * What an upgrade or a firmware update installs, as the dialog builds it from an allowed
 * source and what the person types after it (docs/upgrades.md, "Allowing sources"). The
 * checks are servers-common's rules, the ones the backend and the operator apply again.
 */
import {
  talosVersionOfImage,
  whyFirmwareSourceRefused,
  whyUpgradeImageRefused,
  type ActionRequestBody,
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
}

/** The allowed sources of an action. */
export function sourcesOf(
  action: InstallAction,
  sources: UpgradeSourcesResponse | undefined,
): string[] {
  if (!sources) return [];
  return action === 'upgrade' ? sources.talosImages : sources.firmwareSources;
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
      body: Pick<ActionRequestBody, 'image' | 'imageURI' | 'applyTime'>;
      /** The whole image or URI, as the dialog shows it. */
      shown: string;
      /** An upgrade's Talos version (the image's tag). */
      version?: string;
    }
  | { ok: false; why?: string };

/**
 * The target a draft makes, or why it is not one yet (nothing typed: no why) or not
 * allowed (the sentence of servers-common's rule, as the backend would answer).
 */
export function installTargetOf(
  action: InstallAction,
  draft: InstallDraft,
  allowed: readonly string[],
): InstallTarget {
  if (!draft.source || draft.rest.trim() === '') return { ok: false };
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
  if (why) return { ok: false, why };
  return {
    ok: true,
    body: {
      imageURI,
      // Immediate is the BMC's default: sent only when asked otherwise.
      ...(draft.applyTime === 'OnReset' ? { applyTime: 'OnReset' } : {}),
    },
    shown: imageURI,
  };
}
