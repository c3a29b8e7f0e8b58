import '@testing-library/jest-dom';
import { act, render, screen, waitFor } from '@testing-library/react';
import { listItemOf, server } from '../testing/fixtures';
import { OVERSCAN, ServerTable, visibleRange } from './ServerTable';

const rowsOf = () => screen.queryAllByTestId('server-row');
const servers = Array.from({ length: 100 }, (_, i) =>
  listItemOf(server(`node-${String(i).padStart(3, '0')}`)),
);
const table = (shown: typeof servers) => (
  <ServerTable
    cluster="rack"
    servers={shown}
    total={servers.length}
    sortKey="name"
    sortDirection="asc"
    onSort={jest.fn()}
    onAction={jest.fn()}
  />
);

/** The animation frames asked for, run only when the test says the browser paints. */
function holdFrames() {
  const frames: FrameRequestCallback[] = [];
  jest.spyOn(window, 'requestAnimationFrame').mockImplementation(callback => {
    frames.push(callback);
    return frames.length;
  });
  jest.spyOn(window, 'cancelAnimationFrame').mockImplementation(() => {});
  return {
    paint: () => act(() => frames.splice(0).forEach(frame => frame(0))),
  };
}

describe('ServerTable: the rows in view first', () => {
  afterEach(() => jest.restoreAllMocks());

  const inView = visibleRange(100, 0, undefined, undefined, 0).end;
  const withOverscan = visibleRange(100, 0).end;

  it('draws only the rows in view until they are painted, then the overscan below them', async () => {
    expect(withOverscan).toBe(inView + OVERSCAN);
    const browser = holdFrames();
    render(table(servers));
    expect(rowsOf()).toHaveLength(inView);
    // Nothing is added before the browser has painted (its frame, then a task).
    await act(async () => {
      await new Promise(resolve => setTimeout(resolve, 0));
    });
    expect(rowsOf()).toHaveLength(inView);
    browser.paint();
    await waitFor(() => expect(rowsOf()).toHaveLength(withOverscan));
    expect(rowsOf().at(-1)).toHaveAttribute(
      'data-node',
      `node-${String(withOverscan - 1).padStart(3, '0')}`,
    );
  });

  it('waits for rows, not for the empty table: a table drawn while loading still draws its first rows alone', async () => {
    const browser = holdFrames();
    const view = render(table([]));
    browser.paint();
    await act(async () => {
      await new Promise(resolve => setTimeout(resolve, 0));
    });
    view.rerender(table(servers));
    expect(rowsOf()).toHaveLength(inView);
    browser.paint();
    await waitFor(() => expect(rowsOf()).toHaveLength(withOverscan));
  });
});
