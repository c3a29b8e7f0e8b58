import type { Config } from '@backstage/config';
import { InputError } from '@backstage/errors';
import { KubeConfig } from '@kubernetes/client-node';
import fs from 'node:fs';
import {
  DEFAULT_NODE_ALERT_MATCHERS,
  validateAlertMatcherTemplates,
} from '@rackside/plugin-servers-common';
import { parseAlertmanagerUrl } from './alerts/AlertmanagerClient';
import { shareKeepAliveAgents } from './clients/agents';
import { TOKEN_FILE_PROVIDER, TokenFileAuthenticator } from './tokenFile';

/** How Rackside reaches one Kubernetes cluster. */
export interface ClusterConfig {
  /** Stable identifier used in routes and catalog annotations. */
  name: string;
  /** Human-readable name; defaults to `name`. */
  title: string;
  /** Namespace of the Rackside operator (Secrets for reclaims live there). */
  operatorNamespace: string;
  /**
   * Where the credentials come from. Exactly one source per cluster so a
   * reader of app-config never has to guess which one wins.
   */
  access:
    | {
        type: 'token';
        url: string;
        /** PEM CA bundle; absent means the system trust store. */
        caData?: string;
        token: string;
        /**
         * Where `token` was read from (serviceAccountTokenFile): read again whenever the
         * file changes, so a rotated token is used from the next request on.
         */
        tokenFile?: string;
        skipTLSVerify: boolean;
      }
    | { type: 'kubeconfig'; path: string; context?: string }
    | { type: 'inCluster' };
  /** The cluster's Alertmanager (docs/alerts.md); absent: no alerts shown or offered. */
  alerting?: ClusterAlertingConfig;
}

/** `servers.clusters[].alertmanager`: where the backend reads a cluster's alerts. */
export interface ClusterAlertingConfig {
  url: string;
  /** PEM CA bundle; absent means the system trust store. */
  caData?: string;
  /** Bearer token, inline (a secret) or from `tokenFile`, read on every request. */
  token?: string;
  tokenFile?: string;
  /** The templates that select a node's alerts (the operator's --alert-matchers). */
  matchers: readonly string[];
}

const NAME_PATTERN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function readFileOption(
  config: Config,
  inlineKey: string,
  fileKey: string,
  where: string,
): string | undefined {
  const inline = config.getOptionalString(inlineKey);
  const file = config.getOptionalString(fileKey);
  if (inline !== undefined && file !== undefined) {
    throw new InputError(
      `${where}: set either ${inlineKey} or ${fileKey}, not both`,
    );
  }
  if (file === undefined) return inline;
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new InputError(
      `${where}.${fileKey}: cannot read ${file}: ${(error as Error).message}`,
    );
  }
}

/**
 * Reads `servers.clusters` from app-config. Errors name the offending key, so
 * a portal with a typo fails at start-up instead of serving an empty page.
 */
export function readClusterConfigs(rootConfig: Config): ClusterConfig[] {
  const entries = rootConfig.getOptionalConfigArray('servers.clusters') ?? [];
  const seen = new Set<string>();
  return entries.map((config, index) => {
    const where = `servers.clusters[${index}]`;
    const name = config.getString('name');
    if (!NAME_PATTERN.test(name)) {
      throw new InputError(
        `${where}.name: "${name}" must be lowercase letters, digits and dashes`,
      );
    }
    if (seen.has(name)) {
      throw new InputError(`${where}.name: cluster "${name}" appears twice`);
    }
    seen.add(name);

    const url = config.getOptionalString('url');
    const kubeconfigFile = config.getOptionalString('kubeconfigFile');
    const inCluster = config.getOptionalBoolean('inCluster') ?? false;
    const sources = [url, kubeconfigFile, inCluster || undefined].filter(
      s => s !== undefined,
    );
    if (sources.length !== 1) {
      throw new InputError(
        `${where}: set exactly one of url (with a token), kubeconfigFile or inCluster`,
      );
    }

    let access: ClusterConfig['access'];
    if (url !== undefined) {
      const token = readFileOption(
        config,
        'serviceAccountToken',
        'serviceAccountTokenFile',
        where,
      );
      if (!token) {
        throw new InputError(
          `${where}: url needs serviceAccountToken or serviceAccountTokenFile`,
        );
      }
      const tokenFile = config.getOptionalString('serviceAccountTokenFile');
      access = {
        type: 'token',
        url,
        caData: readFileOption(config, 'caData', 'caFile', where),
        token,
        ...(tokenFile !== undefined ? { tokenFile } : {}),
        skipTLSVerify: config.getOptionalBoolean('skipTLSVerify') ?? false,
      };
    } else if (kubeconfigFile !== undefined) {
      access = {
        type: 'kubeconfig',
        path: kubeconfigFile,
        context: config.getOptionalString('kubeconfigContext'),
      };
    } else {
      access = { type: 'inCluster' };
    }

    const alerting = readAlertingConfig(config, where);
    return {
      ...(alerting ? { alerting } : {}),
      name,
      title: config.getOptionalString('title') ?? name,
      operatorNamespace:
        config.getOptionalString('operatorNamespace') ?? 'rackside-system',
      access,
    };
  });
}

/** `servers.clusters[i].alertmanager`, checked; undefined when absent. */
function readAlertingConfig(
  cluster: Config,
  where: string,
): ClusterAlertingConfig | undefined {
  const config = cluster.getOptionalConfig('alertmanager');
  if (!config) return undefined;
  const at = `${where}.alertmanager`;
  const url = config.getString('url');
  try {
    parseAlertmanagerUrl(url);
  } catch (error) {
    throw new InputError(`${at}.url: ${(error as Error).message}`);
  }
  const matchers = config.getOptionalStringArray('matchers') ?? [
    ...DEFAULT_NODE_ALERT_MATCHERS,
  ];
  try {
    validateAlertMatcherTemplates(matchers);
  } catch (error) {
    throw new InputError(`${at}.matchers: ${(error as Error).message}`);
  }
  const token = config.getOptionalString('token');
  const tokenFile = config.getOptionalString('tokenFile');
  if (token !== undefined && tokenFile !== undefined) {
    throw new InputError(`${at}: set either token or tokenFile, not both`);
  }
  return {
    url,
    caData: readFileOption(config, 'caData', 'caFile', at),
    ...(token !== undefined ? { token } : {}),
    ...(tokenFile !== undefined ? { tokenFile } : {}),
    matchers,
  };
}

/** Builds a client-node KubeConfig for one cluster. */
export function makeKubeConfig(cluster: ClusterConfig): KubeConfig {
  const kc = new KubeConfig();
  const { access } = cluster;
  switch (access.type) {
    case 'token':
      kc.loadFromOptions({
        clusters: [
          {
            name: cluster.name,
            server: access.url,
            caData: access.caData
              ? Buffer.from(access.caData).toString('base64')
              : undefined,
            skipTLSVerify: access.skipTLSVerify,
          },
        ],
        users: [
          access.tokenFile
            ? {
                name: 'rackside',
                authProvider: {
                  name: TOKEN_FILE_PROVIDER,
                  config: { tokenPath: access.tokenFile },
                },
              }
            : { name: 'rackside', token: access.token },
        ],
        contexts: [
          { name: cluster.name, cluster: cluster.name, user: 'rackside' },
        ],
        currentContext: cluster.name,
      });
      if (access.tokenFile) {
        kc.addAuthenticator(
          new TokenFileAuthenticator(access.tokenFile, access.token),
        );
      }
      break;
    case 'kubeconfig':
      kc.loadFromFile(access.path);
      if (access.context) kc.setCurrentContext(access.context);
      break;
    case 'inCluster':
      kc.loadFromCluster();
      break;
    default: {
      // Exhaustive: an access type added to ClusterConfig and not handled here fails to
      // compile. The message names the type only (the object may hold a token).
      const unhandled: never = access;
      throw new Error(
        `unknown access type ${(unhandled as { type: string }).type}`,
      );
    }
  }
  // client-node's own clients too keep one connection per cluster (KubeHttp always does).
  return shareKeepAliveAgents(kc);
}
