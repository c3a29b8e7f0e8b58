import { renderTestApp } from '@backstage/frontend-test-utils';
import { createTestEntityPage } from '@backstage/plugin-catalog-react/testUtils';
import { EntityContentBlueprint } from '@backstage/plugin-catalog-react/alpha';
import { createExtensionTester } from '@backstage/frontend-test-utils';
import { screen, within } from '@testing-library/react';
import { entityServerContent } from '../../alpha';
import { serversApiRef } from '../../api';
import { fakeServersApi, OK, server, serverList } from '../../testing/fixtures';

const entity = (annotations: Record<string, string>) => ({
  apiVersion: 'backstage.io/v1alpha1',
  kind: 'Resource',
  metadata: { name: 'rack--worker-1', annotations },
  spec: { type: 'server', owner: 'group:default/plant-admins' },
});

describe('the Server tab (new frontend system)', () => {
  // The tab is lazy: its loader imports the tab's module, which Jest transforms and runs
  // on first use. Loaded here, before any test, that work is not inside a findBy's
  // ceiling (on a loaded machine it took longer); the loader then finds it loaded.
  beforeAll(async () => {
    await import('.');
  });

  it('is a tab at server titled Server, only on entities annotated rackside.dev/node', () => {
    const tester = createExtensionTester(entityServerContent);
    expect(tester.get(EntityContentBlueprint.dataRefs.title)).toBe('Server');
    const filter = tester.get(EntityContentBlueprint.dataRefs.filterFunction)!;
    expect(filter(entity({ 'rackside.dev/node': 'worker-1' }))).toBe(true);
    expect(filter(entity({}))).toBe(false);
  });

  it('renders the server on the entity page', async () => {
    const api = fakeServersApi(
      serverList([server('worker-1', {}, { cordon: OK })]),
    );
    renderTestApp({
      extensions: [
        createTestEntityPage({
          entity: entity({
            'rackside.dev/cluster': 'rack',
            'rackside.dev/node': 'worker-1',
          }),
        }),
        entityServerContent,
      ],
      apis: [[serversApiRef, api]],
    });
    expect(await screen.findByTestId('entity-server-state')).toHaveTextContent(
      'worker-1',
    );
    expect(
      within(screen.getByTestId('entity-server-actions')).getByRole('listitem'),
    ).toHaveTextContent('Cordon');
  });
});
