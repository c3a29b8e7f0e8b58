import { quorumNumbersSentence, quorumNumbersText } from './quorumText';

describe('the quorum numbers in words', () => {
  it('names each known number, in one order', () => {
    expect(
      quorumNumbersText({ members: 3, quorum: 2, ready: 2, margin: 0 }),
    ).toBe('members 3, quorum 2, ready 2, margin 0');
    expect(quorumNumbersSentence({ members: 3, quorum: 2, margin: 1 })).toBe(
      'Members 3, quorum 2, margin 1.',
    );
  });

  it('adds the margin afterwards only when the action changes it', () => {
    const now = { members: 3, quorum: 2, ready: 2, margin: 0 };
    expect(quorumNumbersSentence({ ...now, marginAfter: -1 })).toBe(
      'Members 3, quorum 2, ready 2, margin 0, margin afterwards -1.',
    );
    expect(quorumNumbersSentence({ ...now, marginAfter: 0 })).toBe(
      'Members 3, quorum 2, ready 2, margin 0.',
    );
  });

  it('leaves out what is not known, and says nothing without numbers', () => {
    expect(quorumNumbersText({ members: 5, quorum: null, ready: 4 })).toBe(
      'members 5, ready 4',
    );
    expect(quorumNumbersText({ members: null, marginAfter: null })).toBe(
      undefined,
    );
    expect(quorumNumbersSentence({})).toBe(undefined);
  });

  it('says a negative margin and the numbers of a refusal as they are', () => {
    expect(
      quorumNumbersText({ members: 3, quorum: 2, ready: 1, margin: -1 }),
    ).toBe('members 3, quorum 2, ready 1, margin -1');
    // A refusal's numbers (status.refusal) and the banner's (a derived summary)
    // are both quorum numbers: the same words for the same numbers.
    const refusal = {
      reason: 'why',
      members: 5,
      quorum: 3,
      ready: 3,
      margin: 0,
    };
    const summary = {
      derived: true,
      members: 5,
      quorum: 3,
      ready: 3,
      margin: 0,
      goingDown: [],
    };
    expect(quorumNumbersText(refusal)).toBe(quorumNumbersText(summary));
    expect(quorumNumbersText(refusal)).toBe(
      'members 5, quorum 3, ready 3, margin 0',
    );
  });
});
