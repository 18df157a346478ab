// lib/poll.js: the network page's polling reads only after the last read ended, and backs
// off on failures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nextDelay, poll } from '../src/lib/poll.js';

test('the wait doubles on failures, up to a bound, and is back to the pace on success', () => {
  assert.equal(nextDelay(5000, true, 5000, 60000), 5000);
  assert.equal(nextDelay(5000, false, 5000, 60000), 10000);
  assert.equal(nextDelay(40000, false, 5000, 60000), 60000);
  assert.equal(nextDelay(60000, false, 5000, 60000), 60000);
  assert.equal(nextDelay(60000, true, 5000, 60000), 5000);
});

test('a read never overlaps the last, failures back off, and abort stops it', async () => {
  const ac = new AbortController();
  let running = 0;
  let overlapped = false;
  let reads = 0;
  const waits = [];
  poll(async () => {
    overlapped ||= running > 0;
    running++;
    reads++;
    await new Promise((r) => setTimeout(r, 15)); // slower than the pace
    running--;
    if (reads >= 3) throw new Error('the node is down');
    return true;
  }, { every: 2, max: 16, signal: ac.signal, onWait: (ms) => waits.push(ms) });
  await new Promise((r) => setTimeout(r, 250));
  ac.abort();
  const after = reads;
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(overlapped, false);
  assert.deepEqual(waits.slice(0, 5), [2, 2, 4, 8, 16]);
  assert.ok(waits.slice(4).every((w) => w === 16));
  assert.equal(reads, after, 'no read starts after abort');
});
