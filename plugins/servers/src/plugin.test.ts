import { serversApiRef } from './api';
import { serversPlugin } from './plugin';

describe('serversPlugin (legacy frontend system)', () => {
  it('provides the ServersApi', () => {
    const apis = [...serversPlugin.getApis()];
    expect(apis.map(f => f.api.id)).toContain(serversApiRef.id);
  });
});
