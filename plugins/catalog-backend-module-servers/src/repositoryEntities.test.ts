import {
  DefaultNamespaceEntityPolicy,
  EntityPolicies,
  FieldFormatEntityPolicy,
  NoForeignRootFieldsEntityPolicy,
  SchemaValidEntityPolicy,
  type Entity,
} from '@backstage/catalog-model';
import { parseEntityYaml } from '@backstage/plugin-catalog-node';
import fs from 'node:fs';
import path from 'node:path';

// The hand-written entities of this repository: its own components and the
// demo's chassis and people. A typo here would only show as a catalog error
// in a running portal.
const ROOT = path.resolve(__dirname, '../../..');
const FILES = [
  'catalog-info.yaml',
  'examples/chassis.yaml',
  'examples/org.yaml',
];

const policies = EntityPolicies.allOf([
  new DefaultNamespaceEntityPolicy(),
  new NoForeignRootFieldsEntityPolicy(),
  new FieldFormatEntityPolicy(),
  new SchemaValidEntityPolicy(),
]);

function entitiesOf(file: string): Entity[] {
  const results = [
    ...parseEntityYaml(fs.readFileSync(path.join(ROOT, file)), {
      type: 'file',
      target: file,
    }),
  ];
  const errors = results.filter(r => r.type === 'error');
  expect(errors).toEqual([]);
  return results.flatMap(r => (r.type === 'entity' ? [r.entity] : []));
}

describe('the repository’s catalog files', () => {
  it.each(FILES)('%s holds valid entities', async file => {
    const entities = entitiesOf(file);
    expect(entities.length).toBeGreaterThan(0);
    for (const entity of entities) {
      await expect(policies.enforce(entity)).resolves.toBeDefined();
    }
  });

  it('describes every plugin and the operator', () => {
    const names = entitiesOf('catalog-info.yaml').map(e => e.metadata.name);
    const plugins = fs
      .readdirSync(path.join(ROOT, 'plugins'))
      .filter(dir =>
        fs.existsSync(path.join(ROOT, 'plugins', dir, 'package.json')),
      );
    for (const dir of plugins) {
      expect(names).toContain(`rackside-plugin-${dir}`);
    }
    expect(names).toContain('rackside-operator');
  });

  it('annotates the chassis like the servers the provider publishes', () => {
    const [chassis] = entitiesOf('examples/chassis.yaml');
    expect(chassis.metadata.annotations).toMatchObject({
      'rackside.dev/cluster': 'plant-a',
      'rackside.dev/node': 'worker-2',
    });
  });
});
