/*
 * The Rackside operator. It executes the requests recorded on Rackside
 * objects; controllers are added issue by issue. For now it serves its probes.
 */
import { startHealthServer } from './health';

async function main() {
  const port = Number(process.env.RACKSIDE_OPERATOR_PROBE_PORT ?? 8081);
  const server = await startHealthServer({ port, isReady: () => true });
  // eslint-disable-next-line no-console
  console.log(`rackside-operator: probes on :${port}`);
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch(error => {
  // eslint-disable-next-line no-console
  console.error(error);
  process.exit(1);
});
