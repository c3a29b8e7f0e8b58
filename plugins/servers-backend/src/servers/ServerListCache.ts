import { createHash } from 'node:crypto';

/** A JSON answer serialised once, with an entity tag that changes whenever it does. */
export interface PreparedJson {
  body: string;
  etag: string;
}

/** One row of a list: its name, what it is made of, and how to build it. */
export interface ListRow {
  name: string;
  /**
   * Everything the row is built from besides the list's context (the Node's shown
   * facts and its maintenance's, so a heartbeat keeps the row; resourceVersions where
   * a cluster state keeps no such key); undefined when that cannot be said, and the row
   * is then built afresh every time.
   */
  key: string | undefined;
  build(): unknown;
}

interface CachedRow {
  key: string;
  json: string;
}

/**
 * Keeps the serialised rows of the servers list. A cluster of thousands of servers is
 * listed far more often than most of its servers change (every page view, every
 * refresh), so a list request serialises only the rows whose inputs changed since the
 * last one with the same context, and joins the rest as they were.
 *
 * The context is what every row depends on: the cluster, its quorum, the power
 * channel's advertisement and the user's permission decisions. Rows are kept for a few
 * contexts (users with different decisions take turns), the least recently used dropped
 * first, and only the rows of the latest list of each context are kept.
 */
export class ServerListCache {
  private readonly contexts = new Map<string, Map<string, CachedRow>>();

  constructor(private readonly maxContexts = 8) {}

  /** The JSON of `{ ...head, items: [rows] }`, rows in the order given. */
  render(
    context: string,
    head: Record<string, unknown>,
    rows: readonly ListRow[],
  ): PreparedJson {
    const previous = this.contexts.get(context);
    const kept = new Map<string, CachedRow>();
    const parts: string[] = new Array(rows.length);
    const tag = createHash('sha1').update(context).update('\n');
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      const cached =
        row.key === undefined ? undefined : previous?.get(row.name);
      let json: string;
      if (cached && cached.key === row.key) {
        json = cached.json;
      } else {
        json = JSON.stringify(row.build());
      }
      if (row.key !== undefined) {
        kept.set(row.name, { key: row.key, json });
        tag.update(row.name).update('\t').update(row.key).update('\n');
      } else {
        // No key says what the row is made of: its text is.
        tag.update(json).update('\n');
      }
      parts[i] = json;
    }
    this.contexts.delete(context);
    this.contexts.set(context, kept);
    while (this.contexts.size > this.maxContexts) {
      this.contexts.delete(this.contexts.keys().next().value!);
    }
    return this.join(head, parts, tag);
  }

  /**
   * Like {@link render} for a part of a list (a window): cached rows are reused and
   * the rows built are kept, next to the context's other rows rather than instead of
   * them.
   */
  renderPart(
    context: string,
    head: Record<string, unknown>,
    rows: readonly ListRow[],
  ): PreparedJson {
    let kept = this.contexts.get(context);
    if (!kept) {
      kept = new Map();
      this.contexts.set(context, kept);
      while (this.contexts.size > this.maxContexts) {
        this.contexts.delete(this.contexts.keys().next().value!);
      }
    }
    const parts: string[] = new Array(rows.length);
    const tag = createHash('sha1').update(context).update('\n');
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      const cached = row.key === undefined ? undefined : kept.get(row.name);
      const json =
        cached && cached.key === row.key
          ? cached.json
          : JSON.stringify(row.build());
      if (row.key !== undefined) {
        // A walk may hold rows older than the list's latest: keep the newest.
        if (!cached) kept.set(row.name, { key: row.key, json });
        tag.update(row.name).update('\t').update(row.key).update('\n');
      } else {
        tag.update(json).update('\n');
      }
      parts[i] = json;
    }
    return this.join(head, parts, tag);
  }

  private join(
    head: Record<string, unknown>,
    parts: string[],
    tag: ReturnType<typeof createHash>,
  ): PreparedJson {
    const headJson = JSON.stringify(head);
    const body = `${headJson.slice(0, -1)}${
      headJson === '{}' ? '' : ','
    }"items":[${parts.join(',')}]}`;
    return {
      body,
      etag: `"${tag.update(headJson).digest('base64url')}"`,
    };
  }
}
