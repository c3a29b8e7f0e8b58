/*
 * The credentials of a firmware source (docs/upgrades.md, "Credentials for a source"):
 * from the one Secret the chart names (`--firmware-source-credentials-secret`), in the
 * operator's own namespace (the chart's Role lets it get that name and no other), read
 * afresh each time the channel acts, so a rotated password is used at once. Never from
 * the request: a NodeMaintenance has no field that names a Secret. Only the entries for
 * an allowed source are used (servers-common parseFirmwareSourceCredentials); the values
 * are handed to the channel and never written into a message, a status, an Event or a log.
 */
import {
  FIRMWARE_SOURCE_CREDENTIALS_KEY,
  parseFirmwareSourceCredentials,
} from '@rackside/plugin-servers-common';
import type { SecretReader } from '../runtime/kube/secrets';
import type { OperatorLog } from '../runtime/logger';

/** A source's credentials by its origin; undefined when it has none. */
export type FirmwareSourceCredentialsLookup = (
  origin: string,
) => Promise<{ username: string; password: string } | undefined>;

export function firmwareSourceCredentialsReader(options: {
  secrets: SecretReader;
  /** The Secret's name; always read in the operator's namespace. */
  secretName: string;
  /** The allowed sources: an entry for any other origin is never used. */
  sources: readonly string[];
  log?: OperatorLog;
}): FirmwareSourceCredentialsLookup {
  return async origin => {
    // No namespace: the reader's default, the operator's own.
    const text = await options.secrets.read({
      name: options.secretName,
      key: FIRMWARE_SOURCE_CREDENTIALS_KEY,
    });
    let parsed;
    try {
      parsed = parseFirmwareSourceCredentials(text, options.sources);
    } catch (error) {
      throw new Error(
        `the firmware source credentials Secret ${options.secretName}: ${
          (error as Error).message
        }`,
      );
    }
    if (parsed.ignored.length > 0) {
      options.log?.(
        `the firmware source credentials Secret ${
          options.secretName
        } has entries for origins that are not allowed sources, never used: ${parsed.ignored.join(
          ', ',
        )}`,
        { level: 'warn' },
      );
    }
    return parsed.byOrigin.get(origin);
  };
}
