import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { CRD_DIRS, GEN_COMMAND, renderCrdFiles } from '../../scripts/crdFiles';
import { racksideCustomResourceDefinitions } from './definitions';

describe.each(
  CRD_DIRS.map(dir => [
    path.relative(path.join(__dirname, '../../../..'), dir),
    dir,
  ]),
)('%s/', (shown, dir) => {
  const generated = renderCrdFiles();

  it('holds exactly the generated files', () => {
    const committed = fs
      .readdirSync(dir)
      .filter(name => name.endsWith('.yaml'))
      .sort();
    expect(committed).toEqual([...generated.keys()].sort());
  });

  it.each([...generated.keys()])(
    '%s equals what the zod schemas render',
    name => {
      const committed = fs.readFileSync(path.join(dir, name), 'utf8');
      if (committed !== generated.get(name)) {
        throw new Error(
          `${shown}/${name} differs from the zod schemas in src/resources: run \`${GEN_COMMAND}\``,
        );
      }
      // The YAML round-trips to the rendered object.
      const crd = racksideCustomResourceDefinitions().find(
        c => `${c.spec.group}_${c.spec.names.plural}.yaml` === name,
      );
      expect(parse(committed)).toEqual(JSON.parse(JSON.stringify(crd)));
    },
  );
});

describe('racksideCustomResourceDefinitions', () => {
  const crds = racksideCustomResourceDefinitions();

  it('renders one CRD per kind with the scope docs/architecture.md, "The Kubernetes API" gives', () => {
    expect(
      crds.map(crd => [
        crd.metadata.name,
        crd.spec.scope,
        crd.spec.names.shortNames,
      ]),
    ).toEqual([
      ['nodemaintenances.rackside.dev', 'Cluster', ['nm']],
      ['powerproviders.rackside.dev', 'Cluster', ['pp']],
      ['serverbmcs.rackside.dev', 'Cluster', ['sbmc']],
      ['talosclusters.rackside.dev', 'Namespaced', ['tc']],
      ['talosmachines.rackside.dev', 'Namespaced', ['tm']],
      ['machinereclaims.rackside.dev', 'Namespaced', ['mr']],
      ['maintenanceplans.rackside.dev', 'Cluster', ['mp']],
    ]);
  });

  it.each(crds.map(crd => [crd.spec.names.kind, crd] as const))(
    '%s has a status subresource, columns, the rackside category and a spec',
    (_kind, crd) => {
      const version = crd.spec.versions[0];
      expect(version.name).toBe('v1alpha1');
      expect(version.subresources).toEqual({ status: {} });
      expect(crd.spec.names.categories).toEqual(['rackside']);
      expect(version.additionalPrinterColumns.map(c => c.name)).toContain(
        'Age',
      );
      const root = version.schema.openAPIV3Schema;
      // spec is required, or defaulted (PowerProvider: an empty object means type none).
      const specDefaulted = root.properties!.spec.default !== undefined;
      expect(root.required).toEqual(specDefaulted ? undefined : ['spec']);
      expect(Object.keys(root.properties!)).toEqual([
        'apiVersion',
        'kind',
        'metadata',
        'spec',
        'status',
      ]);
    },
  );

  it('shows NODE, INTENT, PHASE, REQUESTER, AGE for nodemaintenances', () => {
    const nm = crds[0].spec.versions[0].additionalPrinterColumns
      .filter(c => !c.priority)
      .map(c => c.name.toUpperCase());
    expect(nm).toEqual(['NODE', 'INTENT', 'PHASE', 'REQUESTER', 'AGE']);
  });

  it('puts the immutability rules where docs/architecture.md, "The Kubernetes API" asks', () => {
    const spec =
      crds[0].spec.versions[0].schema.openAPIV3Schema.properties!.spec;
    expect(spec.properties!.nodeName['x-kubernetes-validations']).toEqual([
      { rule: 'self == oldSelf', message: 'nodeName is immutable' },
    ]);
    expect(spec.properties!.intent['x-kubernetes-validations']).toEqual([
      { rule: 'self == oldSelf', message: 'intent is immutable' },
    ]);
    const fieldPaths = spec['x-kubernetes-validations']!.map(v => v.fieldPath);
    expect(fieldPaths).toEqual(
      expect.arrayContaining(['.returnToService', '.abandon', '.powerOn']),
    );
  });
});
