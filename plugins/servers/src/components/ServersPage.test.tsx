import { render, screen } from '@testing-library/react';
import { ServersPage } from './ServersPage';

describe('ServersPage', () => {
  it('says how to configure a cluster when none is configured', () => {
    render(<ServersPage />);
    expect(
      screen.getByRole('heading', { name: 'Servers' }),
    ).toBeInTheDocument();
    expect(screen.getByText('servers.clusters')).toBeInTheDocument();
  });
});
