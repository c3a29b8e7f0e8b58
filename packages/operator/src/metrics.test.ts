import { createMetrics } from './metrics';

describe('createMetrics', () => {
  it('exposes maintenances by phase, drain duration, power verbs and refusals', async () => {
    const metrics = createMetrics();
    metrics.maintenancesByPhase.set({ phase: 'Cordoned' }, 2);
    metrics.powerVerbsSent.inc({ verb: 'reboot', channel: 'talos' });
    metrics.refusals.inc({ cause: 'quorum' });
    metrics.drainDuration.observe(12);
    const { body, contentType } = await metrics.render();
    expect(contentType).toMatch(/text\/plain/);
    expect(body).toContain('rackside_maintenances{phase="Cordoned"} 2');
    expect(body).toContain(
      'rackside_power_verbs_sent_total{verb="reboot",channel="talos"} 1',
    );
    expect(body).toContain('rackside_refusals_total{cause="quorum"} 1');
    expect(body).toContain('rackside_drain_duration_seconds_count 1');
  });

  it('reads rackside_leader from the elector at each scrape', async () => {
    const metrics = createMetrics();
    expect((await metrics.render()).body).toContain('rackside_leader 0');
    let leading = true;
    metrics.leadership(() => leading);
    expect((await metrics.render()).body).toContain('rackside_leader 1');
    leading = false;
    expect((await metrics.render()).body).toContain('rackside_leader 0');
  });
});
