/**
 * A control plane's quorum numbers as a guard, a pre-flight or a refusal
 * carries them; any of them may be unknown (absent or null).
 */
export interface QuorumNumbers {
  members?: number | null;
  quorum?: number | null;
  ready?: number | null;
  margin?: number | null;
  /** The margin once the action has taken effect (a pre-flight's). */
  marginAfter?: number | null;
}

const known = (n: number | null | undefined): n is number =>
  n !== undefined && n !== null;

/**
 * The quorum numbers in the words the frontend, the backend and the operator
 * share: "members 3, quorum 2, ready 2, margin 0", then ", margin afterwards
 * -1" when an action changes the margin. A number not known is left out;
 * undefined when none is. The one wording of the quorum banner, the action
 * dialog, the pre-flight, the refusal text of the portal and of the Refused
 * notification, and the operator's plan table.
 */
export function quorumNumbersText(n: QuorumNumbers): string | undefined {
  const parts: string[] = [];
  if (known(n.members)) parts.push(`members ${n.members}`);
  if (known(n.quorum)) parts.push(`quorum ${n.quorum}`);
  if (known(n.ready)) parts.push(`ready ${n.ready}`);
  if (known(n.margin)) parts.push(`margin ${n.margin}`);
  if (known(n.marginAfter) && n.marginAfter !== n.margin) {
    parts.push(`margin afterwards ${n.marginAfter}`);
  }
  return parts.length > 0 ? parts.join(', ') : undefined;
}

/** The same as a sentence of its own: "Members 3, quorum 2, ready 2, margin 0." */
export function quorumNumbersSentence(n: QuorumNumbers): string | undefined {
  const text = quorumNumbersText(n);
  return text === undefined
    ? undefined
    : `${text[0].toUpperCase()}${text.slice(1)}.`;
}
