import '@testing-library/jest-dom';
import { act } from 'react';
import { renderInTestApp } from '@backstage/frontend-test-utils';
import { signalApiRef } from '@backstage/plugin-signals-react';
import { screen, waitFor } from '@testing-library/react';
import { serversApiRef } from '../../api';
import { fakeServersApi, server, serverList } from '../../testing/fixtures';
import { ClusterSection, POLL_INTERVAL_MS } from './ClusterSection';

describe('ClusterSection live updates', () => {
  afterEach(() => jest.useRealTimers());

  it('refetches its cluster when the servers signal names it', async () => {
    const api = fakeServersApi(serverList([server('worker-1')]));
    let deliver: (message: any) => void = () => {};
    const signals = {
      subscribe: jest.fn((_channel: string, onMessage: any) => {
        deliver = onMessage;
        return { unsubscribe: jest.fn() };
      }),
    };
    renderInTestApp(<ClusterSection cluster="rack" />, {
      apis: [
        [serversApiRef, api],
        [signalApiRef, signals],
      ],
    });
    expect(await screen.findByTestId('server-row')).toBeInTheDocument();
    expect(signals.subscribe).toHaveBeenCalledWith(
      'rackside:servers',
      expect.any(Function),
    );
    expect(api.listServerWindow).toHaveBeenCalledTimes(1);
    act(() => deliver({ cluster: 'other' }));
    act(() => deliver({ cluster: 'rack' }));
    await waitFor(() => expect(api.listServerWindow).toHaveBeenCalledTimes(2));
  });

  it('polls every 10 s without signals', async () => {
    jest.useFakeTimers();
    const api = fakeServersApi(serverList([server('worker-1')]));
    renderInTestApp(<ClusterSection cluster="rack" />, {
      apis: [[serversApiRef, api]],
    });
    expect(await screen.findByTestId('server-row')).toBeInTheDocument();
    expect(api.listServerWindow).toHaveBeenCalledTimes(1);
    await act(async () => {
      jest.advanceTimersByTime(POLL_INTERVAL_MS);
    });
    await waitFor(() => expect(api.listServerWindow).toHaveBeenCalledTimes(2));
  });
});
