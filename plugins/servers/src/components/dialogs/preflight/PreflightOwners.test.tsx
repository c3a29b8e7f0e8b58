import '@testing-library/jest-dom';
import { renderInTestApp } from '@backstage/frontend-test-utils';
import { screen, within } from '@testing-library/react';
import { preflightResponse } from '../../../testing/drain';
import { PreflightView } from './PreflightView';

describe('PreflightView, the owners a drain notifies (docs/architecture.md, "The backend")', () => {
  it('lists the catalog entities whose pods the drain evicts, with owner and pods', async () => {
    await renderInTestApp(
      <PreflightView
        preflight={{
          ...preflightResponse(),
          affectedEntities: [
            {
              entityRef: 'component:default/shop-web',
              title: 'Shop web front end',
              owner: 'group:default/plant-admins',
              kubernetesId: 'shop-web',
              pods: ['shop/web-1', 'shop/web-2'],
            },
            {
              entityRef: 'component:default/orphan',
              title: 'orphan',
              kubernetesId: 'orphan',
              pods: ['shop/orphan-1'],
            },
          ],
        }}
      />,
    );
    const owners = screen.getByTestId('preflight-owners');
    expect(
      within(owners).getByRole('heading', {
        name: 'Catalog entities whose pods it evicts (2)',
      }),
    ).toBeInTheDocument();
    expect(owners).toHaveTextContent(
      'Their owners are notified when the drain starts.',
    );
    const [web, orphan] = within(owners).getAllByRole('listitem');
    expect(web).toHaveTextContent(
      'Shop web front end (component:default/shop-web)owner group:default/plant-admins; pods shop/web-1, shop/web-2',
    );
    expect(orphan).toHaveTextContent('owner none in the catalog');
  });

  it('shows no such section when the drain evicts no catalog entity', async () => {
    await renderInTestApp(
      <PreflightView
        preflight={{ ...preflightResponse(), affectedEntities: [] }}
      />,
    );
    expect(screen.queryByTestId('preflight-owners')).toBeNull();
  });
});
