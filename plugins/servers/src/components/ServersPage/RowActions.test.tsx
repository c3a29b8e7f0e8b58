import '@testing-library/jest-dom';
import { renderInTestApp } from '@backstage/frontend-test-utils';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { listItemOf, OK, server } from '../../testing/fixtures';
import { buttonsThatFit, MORE_ACTIONS, RowActions } from './RowActions';

describe('how many of a row’s actions are buttons', () => {
  it('all of them when they fit, or when nothing is laid out', () => {
    expect(buttonsThatFit([80, 60, 80], 300)).toBe(3);
    expect(buttonsThatFit([80, 60, 80], 0)).toBe(3);
    expect(buttonsThatFit([80, undefined, 80], 100)).toBe(3);
  });

  it('as many as fit beside the More actions button', () => {
    // 80 + 8 + 60 + 8 + 34 = 190 fits in 200; the third does not.
    expect(buttonsThatFit([80, 60, 80], 200)).toBe(2);
    expect(buttonsThatFit([80, 60, 80], 200, 50)).toBe(1);
    expect(buttonsThatFit([180, 60], 100)).toBe(0);
  });
});

/** A layout in which the cell is `space` wide and each button `button` wide. */
function layout(space: number, button: number) {
  const width = jest
    .spyOn(HTMLElement.prototype, 'clientWidth', 'get')
    .mockImplementation(function clientWidth(this: HTMLElement) {
      return this.dataset.testid === 'row-actions' ? space : 0;
    });
  const rect = jest
    .spyOn(HTMLElement.prototype, 'getBoundingClientRect')
    .mockImplementation(
      () => ({ width: button, height: 30, x: 0, y: 0 } as DOMRect),
    );
  return () => {
    width.mockRestore();
    rect.mockRestore();
  };
}

const worker = listItemOf(
  server('worker-1', {}, { cordon: OK, drain: OK, reboot: OK, shutdown: OK }),
);

describe('the actions of a row', () => {
  let restore: () => void = () => {};
  afterEach(() => restore());

  it('are all buttons when they fit', async () => {
    restore = layout(1000, 80);
    await renderInTestApp(
      <RowActions
        server={worker}
        actions={['cordon', 'drain', 'reboot', 'shutdown']}
        onAction={jest.fn()}
      />,
    );
    expect(
      screen.getByRole('button', { name: 'Reboot worker-1' }),
    ).toBeVisible();
    expect(
      screen.queryByRole('button', { name: `${MORE_ACTIONS} worker-1` }),
    ).toBeNull();
  });

  it('put what does not fit behind a menu a keyboard can use', async () => {
    restore = layout(260, 80);
    const onAction = jest.fn();
    await renderInTestApp(
      <RowActions
        server={worker}
        actions={['cordon', 'drain', 'reboot', 'shutdown']}
        onAction={onAction}
      />,
    );
    const more = await screen.findByRole('button', {
      name: `${MORE_ACTIONS} worker-1`,
    });
    // Drawn, More actions is 80 wide too: 80 + 8 + 80 + 8 + 80 fits in 260,
    // so Cordon and Drain stay buttons.
    expect(
      screen.getByRole('button', { name: 'Cordon worker-1' }),
    ).toBeVisible();
    expect(
      screen.getByRole('button', { name: 'Drain worker-1' }),
    ).toBeVisible();
    expect(
      screen.queryByRole('button', { name: 'Reboot worker-1' }),
    ).toBeNull();
    expect(more).toHaveAttribute('aria-haspopup', 'menu');
    expect(more).toHaveAttribute('aria-expanded', 'false');

    more.focus();
    fireEvent.click(more);
    const menu = await screen.findByRole('menu');
    expect(more).toHaveAttribute('aria-expanded', 'true');
    expect(more).toHaveAttribute('aria-controls', menu.id);
    expect(menu).toHaveAttribute('aria-labelledby', more.id);
    const items = within(menu).getAllByRole('menuitem');
    expect(items.map(i => i.textContent)).toEqual(['Reboot', 'Shut down']);
    await waitFor(() => expect(items[0]).toHaveFocus());
    fireEvent.keyDown(items[0], { key: 'ArrowDown' });
    expect(items[1]).toHaveFocus();

    fireEvent.keyDown(items[1], { key: 'Escape' });
    await waitFor(() => expect(screen.queryByRole('menu')).toBeNull());
    expect(more).toHaveFocus();
    expect(onAction).not.toHaveBeenCalled();

    fireEvent.click(more);
    fireEvent.click(
      await screen.findByRole('menuitem', { name: 'Shut down worker-1' }),
    );
    expect(onAction).toHaveBeenCalledWith(worker, 'shutdown');
    await waitFor(() => expect(screen.queryByRole('menu')).toBeNull());
  });
});
