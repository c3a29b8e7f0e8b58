import { createMetrics } from './metrics';
import { WorkQueue } from './workqueue';

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

  it('exposes the standard process and Node.js metrics under their usual names', async () => {
    const { body } = await createMetrics().render();
    expect(body).toContain('# TYPE process_cpu_seconds_total counter');
    expect(body).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(body).toMatch(/^process_start_time_seconds \d+/m);
    expect(body).toContain('# TYPE nodejs_heap_size_used_bytes gauge');
    expect(body).toContain('nodejs_eventloop_lag_seconds');
    expect(body).not.toContain('rackside_process_');
  });

  it('keeps two operators in one process apart (one registry each)', async () => {
    const a = createMetrics();
    const b = createMetrics();
    a.queue('NodeMaintenance').retry();
    expect((await a.render()).body).toContain(
      'rackside_workqueue_retries_total{controller="NodeMaintenance"} 1',
    );
    expect((await b.render()).body).not.toContain(
      'rackside_workqueue_retries_total{controller="NodeMaintenance"}',
    );
    expect((await b.render()).body).toContain('process_cpu_seconds_total');
  });

  it('shows queue depth, retries and reconcile duration per controller from a WorkQueue', async () => {
    const metrics = createMetrics();
    const release: Array<() => void> = [];
    let failed = false;
    const queue = new WorkQueue(
      key =>
        new Promise<void>((resolve, reject) => {
          if (key === 'bad' && !failed) {
            failed = true;
            reject(new Error('apiserver said no'));
            return;
          }
          release.push(resolve);
        }),
      {
        workers: 1,
        baseBackoffMs: 60_000,
        metrics: metrics.queue('TalosMachine'),
      },
    );
    queue.add('bad'); // fails at once, waits out its backoff
    await new Promise(r => setTimeout(r, 0));
    queue.add('a'); // runs, held
    queue.add('b');
    queue.add('c');
    let { body } = await metrics.render();
    expect(body).toContain(
      'rackside_workqueue_depth{controller="TalosMachine"} 2',
    );
    expect(body).toContain(
      'rackside_workqueue_retries_total{controller="TalosMachine"} 1',
    );
    expect(body).toContain(
      'rackside_reconcile_duration_seconds_count{controller="TalosMachine"} 1',
    );
    expect(body).toMatch(
      /rackside_reconcile_duration_seconds_bucket\{le="0\.005",controller="TalosMachine"\} \d/,
    );
    while (release.length > 0 || queue.length > 0) {
      release.shift()?.();
      await new Promise(r => setTimeout(r, 0));
    }
    ({ body } = await metrics.render());
    expect(body).toContain(
      'rackside_workqueue_depth{controller="TalosMachine"} 0',
    );
    expect(body).toContain(
      'rackside_reconcile_duration_seconds_count{controller="TalosMachine"} 4',
    );
    queue.stop();
  });
});
