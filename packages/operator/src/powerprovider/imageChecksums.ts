/**
 * The sha256 of firmware images, fetched in the background.
 *
 * The check before a firmware update is sent runs under the admission lock (every
 * maintenance's send-time check waits for it), and fetching an image may take minutes
 * (bounded at 512 MiB and 10 minutes by the channel). So the row never waits for the
 * fetch: it asks `read`, which answers what is known now and starts one fetch per image
 * when nothing fresh is known; the row waits outside the lock and asks again.
 *
 * A reading is used only while it is fresh (`freshMs` after the fetch ended): the image
 * is read again for a later request, as its source may have changed. In memory only:
 * another leader fetches the image again.
 */
import type { ChecksumReading } from '../maintenance/types';

type Entry = {
  reading: ChecksumReading;
  /** When the fetch ended (ms), for freshness; undefined while it runs. */
  endedAt?: number;
};

/** How long a finished reading stands for the image (5 minutes). */
export const CHECKSUM_FRESH_MS = 5 * 60_000;

/** The most images remembered at once; the oldest finished readings go first. */
const MAX_ENTRIES = 64;

export class ImageChecksums {
  private readonly entries = new Map<string, Entry>();

  constructor(
    /** The channel's fetch: the image's `sha256:<hex>`, or a throw saying why not. */
    private readonly fetch: (imageURI: string) => Promise<string>,
    private readonly now: () => number = Date.now,
    private readonly freshMs: number = CHECKSUM_FRESH_MS,
  ) {}

  /**
   * What is known of `imageURI`'s sha256; starts a fetch (at most one per image at a
   * time) when nothing fresh is known, answering `fetching` until it ends.
   */
  read(imageURI: string): ChecksumReading {
    const known = this.entries.get(imageURI);
    if (known && known.endedAt === undefined) return known.reading;
    if (known && this.now() - known.endedAt! < this.freshMs) {
      return known.reading;
    }
    this.start(imageURI);
    return { state: 'fetching' };
  }

  private start(imageURI: string): void {
    this.entries.delete(imageURI);
    this.evict();
    const entry: Entry = { reading: { state: 'fetching' } };
    this.entries.set(imageURI, entry);
    const ended = (reading: ChecksumReading) => {
      entry.reading = reading;
      entry.endedAt = this.now();
    };
    // The promise is not awaited here: the row asks again on its next reconcile.
    Promise.resolve()
      .then(() => this.fetch(imageURI))
      .then(
        checksum => ended({ state: 'read', checksum }),
        error =>
          ended({
            state: 'failed',
            message: error instanceof Error ? error.message : String(error),
          }),
      );
  }

  /** Makes room for one more entry, dropping the finished readings that ended first. */
  private evict(): void {
    if (this.entries.size < MAX_ENTRIES) return;
    const finished = [...this.entries].filter(
      ([, e]) => e.endedAt !== undefined,
    );
    finished.sort(([, a], [, b]) => a.endedAt! - b.endedAt!);
    for (const [uri] of finished) {
      if (this.entries.size < MAX_ENTRIES) return;
      this.entries.delete(uri);
    }
  }
}
