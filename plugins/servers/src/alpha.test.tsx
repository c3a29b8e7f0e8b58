import { renderTestApp } from '@backstage/frontend-test-utils';
import { screen } from '@testing-library/react';
import serversPlugin from './alpha';

describe('servers plugin (new frontend system)', () => {
  it('mounts the Servers page at /servers', async () => {
    renderTestApp({
      features: [serversPlugin],
      initialRouteEntries: ['/servers'],
    });
    expect(
      await screen.findByTestId('rackside-servers-page'),
    ).toBeInTheDocument();
  });
});
