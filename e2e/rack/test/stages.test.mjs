// kwokStagesFile: the stock Stage file unless a heartbeat period is asked for, then a copy
// whose node-heartbeat stage alone has the new delay.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { kwokStagesFile, RACK_DIR } from '../rack.mjs';

const stock = path.join(RACK_DIR, 'kwok', 'stages.yaml');

test('without a heartbeat period the stock stages file is used', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stages-'));
  assert.equal(kwokStagesFile(dir, undefined), stock);
  assert.deepEqual(fs.readdirSync(dir), []);
});

test('a heartbeat period rewrites only the node-heartbeat delay', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stages-'));
  const file = kwokStagesFile(dir, 300);
  assert.equal(file, path.join(dir, 'kwok-stages.yaml'));
  const text = fs.readFileSync(file, 'utf8');
  const heartbeat = text.slice(
    text.indexOf('name: node-heartbeat'),
    text.indexOf('name: pod-ready'),
  );
  assert.match(heartbeat, /durationMilliseconds: 300000\n/);
  assert.match(heartbeat, /jitterDurationMilliseconds: 360000\n/);
  // Everything else is the stock file, byte for byte.
  const original = fs.readFileSync(stock, 'utf8');
  assert.equal(
    text.replace('300000', '20000').replace('360000', '25000'),
    original,
  );
});

test('a period that is not a positive integer is refused and writes nothing', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stages-'));
  for (const bad of [0, -5, 1.5, Number.NaN])
    assert.throws(() => kwokStagesFile(dir, bad), /positive integer/);
  assert.deepEqual(fs.readdirSync(dir), []);
});
