/*
 * The order of Talos versions as people read them (v1.9.0 < v1.11.3 < v1.12.0-beta.1 <
 * v1.12.0), for the Servers table's Talos column: text order would put v1.12.0 before
 * v1.9.0. A version that is not `v<major>.<minor>.<patch>[-<pre>]` goes after every one
 * that is, in text order.
 */

/** The parts of a Talos version, or undefined when it is not one. */
function partsOf(
  version: string,
): { numbers: [number, number, number]; pre?: string } | undefined {
  const m =
    /^v?(\d{1,9})\.(\d{1,9})\.(\d{1,9})(?:-([0-9A-Za-z.-]{1,64}))?$/.exec(
      version,
    );
  if (!m) return undefined;
  return {
    numbers: [Number(m[1]), Number(m[2]), Number(m[3])],
    ...(m[4] !== undefined ? { pre: m[4] } : {}),
  };
}

// Numbers inside a pre-release compare as numbers (beta.2 < beta.10).
const collate = new Intl.Collator('en', { numeric: true }).compare;

/**
 * Negative when `a` is older than `b`, positive when newer, 0 when the same: by major,
 * minor and patch as numbers, a pre-release before its release. For
 * `Array.prototype.sort`.
 */
export function compareTalosVersions(a: string, b: string): number {
  const pa = partsOf(a);
  const pb = partsOf(b);
  if (!pa || !pb) {
    if (pa) return -1;
    if (pb) return 1;
    return collate(a, b);
  }
  for (let i = 0; i < 3; i++) {
    const d = pa.numbers[i] - pb.numbers[i];
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  if (pa.pre === pb.pre) return 0;
  if (pa.pre === undefined) return 1;
  if (pb.pre === undefined) return -1;
  return collate(pa.pre, pb.pre);
}
