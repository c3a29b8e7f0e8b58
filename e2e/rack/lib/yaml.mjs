// Multi-document YAML for the rack's scripts (the `yaml` package, a root devDependency).
import { parseAllDocuments } from 'yaml';

/** Every document of a YAML stream as plain objects, empty documents left out. */
export function parseYamlDocuments(text) {
  return parseAllDocuments(text)
    .map(doc => {
      if (doc.errors.length) throw new Error(`YAML: ${doc.errors[0].message}`);
      return doc.toJSON();
    })
    .filter(Boolean);
}
