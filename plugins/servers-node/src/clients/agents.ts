/*
 * One keep-alive HTTPS agent per cluster. client-node's KubeConfig makes a new
 * https.Agent for every request (applyToHTTPSOptions, applySecurityAuthentication), so
 * every request paid a TCP and TLS handshake with the apiserver. Here the agent's TLS
 * options (server, CA, client certificate and key, verification, SNI name) pick a shared
 * agent that keeps its connections: the same cluster with the same TLS identity shares
 * one pool, whichever KubeConfig object or client asks. Bearer tokens are headers of each
 * request, so clients with different tokens for one cluster share connections too.
 *
 * When the TLS material changes (a rotated client certificate, a new CA file) the key
 * changes and a new agent is made; the old one is no longer asked for, and its idle
 * connections close after IDLE_MS. Past MAX_AGENTS the least recently used is retired
 * (idle connections closed now, busy ones when their request ends).
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/**
 * An idle connection is closed after this long, well before the apiserver's own idle
 * timeout (90 s in k8s.io/apiserver), so a pooled connection is not reused just as the
 * server closes it.
 */
const IDLE_MS = 30_000;
/** Distinct clusters/identities kept; beyond that the least recently used is retired. */
const MAX_AGENTS = 64;

const TLS_KEYS = [
  'ca',
  'cert',
  'key',
  'pfx',
  'passphrase',
  'rejectUnauthorized',
  'servername',
  'ciphers',
  'crl',
  'secureProtocol',
  'minVersion',
  'maxVersion',
] as const;

const agents = new Map<string, https.Agent>();
const shared = new WeakSet<http.Agent>();

function keyOf(server: string, options: Record<string, unknown>): string {
  const hash = createHash('sha256');
  hash.update(server);
  for (const name of TLS_KEYS) {
    const value = options[name];
    hash.update(`\0${name}=`);
    if (value === undefined) continue;
    for (const part of Array.isArray(value) ? value : [value]) {
      hash.update(
        Buffer.isBuffer(part) ? part : Buffer.from(String(part), 'utf8'),
      );
      hash.update('\0');
    }
  }
  return hash.digest('hex');
}

function retire(agent: https.Agent) {
  // Busy sockets are destroyed when their request ends instead of pooled.
  agent.keepSocketAlive = () => false;
  for (const sockets of Object.values(agent.freeSockets)) {
    for (const socket of sockets ?? []) socket.destroy();
  }
}

/** Whether `agent` is one of the shared keep-alive agents (never destroy it per request). */
export function isSharedAgent(agent: http.Agent | undefined): boolean {
  return agent !== undefined && shared.has(agent);
}

/**
 * The shared keep-alive agent for `server` and the TLS options of `fresh` (the agent
 * client-node just made for one request). Answers `fresh` itself when it is not a plain
 * https.Agent (a proxy agent, or http.Agent for an http:// server): those stay per request.
 */
export function keepAliveAgent(
  server: string,
  fresh: http.Agent | undefined,
): http.Agent | undefined {
  if (!fresh || shared.has(fresh)) return fresh;
  if (
    !(fresh instanceof https.Agent) ||
    Object.getPrototypeOf(fresh) !== https.Agent.prototype
  ) {
    return fresh;
  }
  const options = fresh.options as Record<string, unknown>;
  const key = keyOf(server, options);
  let agent = agents.get(key);
  if (agent) {
    // Most recently used last, so the first entry is the one to retire.
    agents.delete(key);
  } else {
    const tlsOptions: https.AgentOptions = {};
    for (const name of TLS_KEYS) {
      if (options[name] !== undefined) {
        (tlsOptions as Record<string, unknown>)[name] = options[name];
      }
    }
    agent = new https.Agent({
      ...tlsOptions,
      keepAlive: true,
      timeout: IDLE_MS,
      scheduling: 'lifo',
    });
    shared.add(agent);
    while (agents.size >= MAX_AGENTS) {
      const [oldestKey, oldest] = agents.entries().next().value!;
      agents.delete(oldestKey);
      retire(oldest);
    }
  }
  agents.set(key, agent);
  fresh.destroy();
  return agent;
}

/**
 * Makes client-node's own clients of `kubeConfig` (makeApiClient, e.g. the operator's
 * Event recorder) use the shared agents too. KubeHttp does this itself for every request.
 */
export function shareKeepAliveAgents(kubeConfig: KubeConfig): KubeConfig {
  const target = kubeConfig as unknown as {
    createAgent(cluster: { server?: string } | null, options: unknown): any;
  };
  const original = target.createAgent.bind(kubeConfig);
  target.createAgent = (cluster, options) =>
    keepAliveAgent(cluster?.server ?? '', original(cluster, options));
  return kubeConfig;
}
