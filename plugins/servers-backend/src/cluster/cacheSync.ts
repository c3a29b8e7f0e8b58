import { ServiceUnavailableError } from '@backstage/errors';

/** How long a read waits for a cache's first list before answering 503. */
const SYNC_TIMEOUT_MS = 15_000;

/**
 * Resolves once `cache` holds its first list. A read must not hang on an apiserver
 * that does not answer (or lacks the resource), so after SYNC_TIMEOUT_MS it rejects
 * with a 503 naming the cluster, what is missing and, with `hint`, a likely cause.
 */
export async function waitForFirstSync(
  cache: { synced: Promise<void>; hasSynced(): boolean },
  what: { cluster: string; items: string; hint?: string },
): Promise<void> {
  if (cache.hasSynced()) return;
  const cause = what.hint
    ? `the apiserver did not answer in time; ${what.hint}`
    : 'the apiserver did not answer in time';
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      cache.synced,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new ServiceUnavailableError(
                `cluster ${what.cluster}: the ${what.items} are not loaded yet (${cause})`,
              ),
            ),
          SYNC_TIMEOUT_MS,
        );
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}
