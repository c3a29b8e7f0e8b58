// kwok's nodes run no container: their pods go Running and nothing runs in them. A rack
// test that needs a pod's container to really run (the chart's `helm test` hooks, and the
// operator they ask) plays the kubelet for that pod: its container, as the pod's spec
// gives it, runs in podman from the release's image archive (scripts/image.sh) with what
// a kubelet gives a container:
//   - the ServiceAccount's token (a TokenRequest bound to the pod), the cluster's CA and
//     the namespace at /var/run/secrets/kubernetes.io/serviceaccount, when the pod mounts
//     a token; KUBERNETES_SERVICE_HOST and _PORT naming the rack's apiserver;
//   - the Secret and emptyDir volumes it mounts, its env (values and the pod's fields),
//     its command and args, its user and a read-only root when its securityContext says;
// then the pod's status is written as the kubelet would (Succeeded or Failed with the exit
// code). Containers share the host's network (no pod network here): `ports` renumbers a
// container's listening flags to free ports, and `hosts` names addresses for Service
// names (what cluster DNS and kube-proxy do: see `serviceProxy`).
//
//   const runner = await createPodRunner({ dir, rack, archive });
//   createPodRunner({ dir, rack, pull: { tlsVerify: false } })  // no archive: each pod's
//     image is pulled from its registry by the pod's own reference (a digest, as a kubelet
//     pulls it); a second runner on the same `dir` finds what the first one pulled
//   runner.pull(ref)          // with `pull`: pull ahead of the pods (rack not needed)
//   runner.imageDigest(ref)   // the digest of the image a reference names in this podman
//   const { code, output } = await runner.runToCompletion(pod);
//   const operator = await runner.start(pod, { args: a => a });  // {stop(), logs()}
//   await runner.stop();
// Needs root and Debian's podman and runc (as e2e/rack/test/image.test.mjs).
import { execFile, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

const TOKEN_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** A TCP port free on 127.0.0.1 when asked. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * What kube-proxy does for one Service port: connections to `address:port` go to
 * `target` (a container's port on the host network). Answers {close()}.
 */
export async function serviceProxy({ address, port, target }) {
  const sockets = new Set();
  const server = net.createServer(client => {
    const upstream = net.connect(target, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, resolve);
  });
  return {
    close: () =>
      new Promise(resolve => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * The global arguments and environment of a podman whose storage is under `dir`: vfs (as
 * on any machine without overlay permissions), runc (crun refuses this machine's hybrid
 * cgroups), cgroupfs, events to a file, and no default ulimits (setting RLIMIT_NOFILE is
 * not permitted in these sandboxes). Answers {args, env}.
 */
export function podmanOfItsOwn(dir) {
  fs.mkdirSync(dir, { recursive: true });
  const conf = path.join(dir, 'containers.conf');
  fs.writeFileSync(conf, '[containers]\ndefault_ulimits = []\n');
  return {
    args: [
      '--root',
      path.join(dir, 'storage'),
      '--runroot',
      path.join(dir, 'run'),
      '--storage-driver',
      'vfs',
      '--runtime',
      'runc',
      '--cgroup-manager',
      'cgroupfs',
      '--events-backend',
      'file',
    ],
    env: { ...process.env, CONTAINERS_CONF: conf },
  };
}

/**
 * A podman of its own (storage under `dir`, vfs, runc, cgroupfs: what this machine
 * allows) with the image archive loaded, or, with `pull`, pulling each pod's image from
 * its registry on first use (`pull.tlsVerify: false` for a plain-HTTP one). `rack` is
 * startRack()'s answer, or anything with `server`, `caFile` and `kube` (connectRack's);
 * a runner that only pulls (`runner.pull(ref)`, ahead of the pods) needs none.
 */
export async function createPodRunner({ dir, rack, archive, pull }) {
  const { args: base, env } = podmanOfItsOwn(dir);
  const podman = args =>
    execFileSync('podman', [...base, ...args], {
      encoding: 'utf8',
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  if (archive) podman(['load', '--quiet', '--input', archive]);
  const images = podman(['images', '--format', '{{.Repository}}:{{.Tag}}'])
    .split('\n')
    .filter(Boolean);
  /** `podman pull` of a reference, off the event loop (a large image takes a while). */
  const pulled = new Map();
  const pullImage = ref => {
    if (!pulled.has(ref))
      pulled.set(
        ref,
        new Promise((resolve, reject) =>
          execFile(
            'podman',
            [
              ...base,
              'pull',
              '--quiet',
              `--tls-verify=${pull.tlsVerify !== false}`,
              ref,
            ],
            { env, encoding: 'utf8' },
            (error, stdout, stderr) =>
              error
                ? reject(new Error(`podman pull ${ref}: ${stderr || error}`))
                : resolve(ref),
          ),
        ),
      );
    return pulled.get(ref);
  };
  const running = new Set();
  let counter = 0;

  /** The loaded image a pod's `image` names (rackside/operator:V is localhost/rackside/...). */
  const imageFor = ref => {
    if (pull) return pullImage(ref);
    const found = images.find(i => i === ref || i.endsWith(`/${ref}`));
    if (!found)
      throw new Error(
        `the pod's image ${ref} is not in ${archive} (${images.join(', ')})`,
      );
    return found;
  };

  /** podman arguments that give the container its volumes and the token, as a kubelet. */
  async function mounts(pod, container) {
    const args = [];
    const podDir = fs.mkdtempSync(path.join(dir, `${pod.metadata.name}-`));
    const volumes = new Map((pod.spec.volumes ?? []).map(v => [v.name, v]));
    for (const m of container.volumeMounts ?? []) {
      const volume = volumes.get(m.name);
      if (volume?.emptyDir) {
        args.push('--tmpfs', `${m.mountPath}:rw,mode=1777`);
      } else if (volume?.secret) {
        const secret = await rack.kube.get(
          `/api/v1/namespaces/${pod.metadata.namespace}/secrets/${volume.secret.secretName}`,
        );
        const target = path.join(podDir, m.name);
        fs.mkdirSync(target);
        const items =
          volume.secret.items ??
          Object.keys(secret.data ?? {}).map(key => ({ key, path: key }));
        for (const { key, path: file } of items)
          fs.writeFileSync(
            path.join(target, file),
            Buffer.from(secret.data[key], 'base64'),
            { mode: 0o644 },
          );
        args.push('--volume', `${target}:${m.mountPath}:ro`);
      } else {
        throw new Error(
          `${pod.metadata.name}: volume ${m.name} of a kind this runner does not mount`,
        );
      }
    }
    if (pod.spec.automountServiceAccountToken !== false) {
      const sa = pod.spec.serviceAccountName ?? 'default';
      const answer = await rack.kube.post(
        `/api/v1/namespaces/${pod.metadata.namespace}/serviceaccounts/${sa}/token`,
        {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: {
            expirationSeconds: 3600,
            boundObjectRef: {
              apiVersion: 'v1',
              kind: 'Pod',
              name: pod.metadata.name,
              uid: pod.metadata.uid,
            },
          },
        },
      );
      const target = path.join(podDir, 'serviceaccount');
      fs.mkdirSync(target);
      fs.writeFileSync(path.join(target, 'token'), answer.status.token, {
        mode: 0o644,
      });
      fs.copyFileSync(rack.caFile, path.join(target, 'ca.crt'));
      fs.chmodSync(path.join(target, 'ca.crt'), 0o644);
      fs.writeFileSync(path.join(target, 'namespace'), pod.metadata.namespace);
      args.push('--volume', `${target}:${TOKEN_DIR}:ro`);
    }
    return args;
  }

  /** The container's env, the pod's fields resolved, and the apiserver's address. */
  function environment(pod, container) {
    const field = p =>
      p.split('.').reduce((o, k) => (o == null ? undefined : o[k]), pod);
    const api = new URL(rack.server);
    const out = [
      '--env',
      `KUBERNETES_SERVICE_HOST=${api.hostname}`,
      '--env',
      `KUBERNETES_SERVICE_PORT=${api.port}`,
    ];
    for (const e of container.env ?? []) {
      const value =
        e.value ??
        (e.valueFrom?.fieldRef
          ? field(e.valueFrom.fieldRef.fieldPath)
          : undefined);
      if (value === undefined)
        throw new Error(
          `${pod.metadata.name}: env ${e.name} not resolvable here`,
        );
      out.push('--env', `${e.name}=${value}`);
    }
    return out;
  }

  /** The `podman run` arguments of a pod's first container. */
  async function runArgs(pod, { args: changeArgs = a => a, hosts = {} } = {}) {
    const container = pod.spec.containers[0];
    const security = {
      ...pod.spec.securityContext,
      ...container.securityContext,
    };
    const name = `rackside-pod-${process.pid}-${++counter}`;
    const out = ['run', '--name', name, '--network', 'host'];
    if (security.runAsUser !== undefined)
      out.push(
        '--user',
        `${security.runAsUser}:${security.runAsGroup ?? security.runAsUser}`,
      );
    if (security.readOnlyRootFilesystem) out.push('--read-only');
    if (security.capabilities?.drop?.includes('ALL'))
      out.push('--cap-drop', 'ALL');
    for (const [host, address] of Object.entries(hosts))
      out.push('--add-host', `${host}:${address}`);
    out.push(...(await mounts(pod, container)), ...environment(pod, container));
    if (container.command)
      out.push('--entrypoint', JSON.stringify(container.command));
    out.push(
      await imageFor(container.image),
      ...changeArgs(container.args ?? []),
    );
    return { name, args: out };
  }

  /** Writes the pod's status as a kubelet would after its container ended. */
  async function complete(pod, code, startedAt) {
    const container = pod.spec.containers[0];
    const now = new Date().toISOString();
    await rack.kube.patch(
      `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/status`,
      {
        status: {
          phase: code === 0 ? 'Succeeded' : 'Failed',
          conditions: [
            { type: 'Ready', status: 'False', lastTransitionTime: now },
            {
              type: 'ContainersReady',
              status: 'False',
              lastTransitionTime: now,
            },
          ],
          containerStatuses: [
            {
              name: container.name,
              image: container.image,
              imageID: '',
              ready: false,
              started: false,
              restartCount: 0,
              state: {
                terminated: {
                  exitCode: code,
                  reason: code === 0 ? 'Completed' : 'Error',
                  startedAt,
                  finishedAt: now,
                },
              },
            },
          ],
        },
      },
    );
  }

  return {
    images,
    /** Pulls `ref` now (with `pull`), so a pod's first start does not wait for it. */
    pull: ref => pullImage(ref),
    /** The manifest digest (sha256:...) of the image `ref` names here. */
    imageDigest: ref =>
      podman(['image', 'inspect', '--format', '{{.Digest}}', ref]).trim(),
    /**
     * Runs the pod's container to its end, writes the pod's status from its exit code.
     * Answers {code, output}.
     */
    async runToCompletion(pod, options) {
      const { name, args } = await runArgs(pod, options);
      const startedAt = new Date().toISOString();
      running.add(name);
      const { code, output } = await new Promise(resolve =>
        execFile(
          'podman',
          [...base, ...args],
          { env, encoding: 'utf8', maxBuffer: 1 << 20 },
          (error, stdout, stderr) =>
            resolve({
              code: error
                ? typeof error.code === 'number'
                  ? error.code
                  : 1
                : 0,
              output: `${stdout}${stderr}`,
            }),
        ),
      );
      try {
        podman(['rm', '--force', '--time', '0', name]);
      } catch {
        // already gone
      }
      running.delete(name);
      await complete(pod, code, startedAt);
      return { code, output };
    },
    /** Starts the pod's container and leaves it running. Answers {logs(), stop()}. */
    async start(pod, options) {
      const { name, args } = await runArgs(pod, options);
      let logs = '';
      const child = spawn('podman', [...base, ...args], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      running.add(name);
      child.stdout.on('data', d => (logs = (logs + d).slice(-20000)));
      child.stderr.on('data', d => (logs = (logs + d).slice(-20000)));
      const exited = new Promise(resolve => child.on('exit', resolve));
      return {
        name,
        /** The digest of the image the running container was made from. */
        imageDigest: () =>
          podman(['inspect', '--format', '{{.ImageDigest}}', name]).trim(),
        logs: () => logs,
        exited,
        stop: async () => {
          try {
            podman(['rm', '--force', '--time', '5', name]);
          } catch {
            // already gone
          }
          running.delete(name);
          await exited;
        },
      };
    },
    /** Removes every container it started. */
    async stop() {
      for (const name of running) {
        try {
          podman(['rm', '--force', '--time', '0', name]);
        } catch {
          // already gone
        }
      }
      running.clear();
    },
  };
}
