import { render, waitFor } from '@testing-library/react';
import App from './App';

describe('App', () => {
  it('starts at the guest sign-in the demo portal uses', async () => {
    process.env = {
      NODE_ENV: 'test',
      APP_CONFIG: [
        {
          data: {
            app: { title: 'Test' },
            backend: { baseUrl: 'http://localhost:7007' },
          },
          context: 'test',
        },
      ] as any,
    };

    const rendered = render(App.createRoot());

    await waitFor(
      () => {
        expect(rendered.getByText('Guest')).toBeInTheDocument();
        expect(rendered.getByRole('button', { name: 'Enter' })).toBeEnabled();
      },
      { timeout: 20_000 },
    );
  }, 30_000);
});
