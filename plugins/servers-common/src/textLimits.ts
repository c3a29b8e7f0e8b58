/*
 * Text that goes into a schema with a length limit (a CRD's maxLength, a status message)
 * is cut here, saying how much was left out, so a long list never makes a write fail.
 */

/** The names, at most `max` of them, then "and N more". */
export function cutList(names: readonly string[], max = 10): string {
  if (names.length <= max) return names.join(', ');
  return `${names.slice(0, max).join(', ')} and ${names.length - max} more`;
}
