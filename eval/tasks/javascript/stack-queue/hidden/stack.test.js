'use strict';
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const { Stack } = require('./stack.js');
const { Queue } = require('./queue.js');

test('peek and isEmpty', () => {
  const s = new Stack();
  assert.strictEqual(s.isEmpty(), true);
  assert.strictEqual(s.peek(), undefined);
  s.push(1);
  s.push(2);
  assert.strictEqual(s.peek(), 2);
  assert.strictEqual(s.isEmpty(), false);
  assert.strictEqual(s.pop(), 2);
});

test('the queue is first in, first out', () => {
  const q = new Queue();
  [1, 2, 3].forEach((x) => q.enqueue(x));
  assert.strictEqual(q.dequeue(), 1);
  q.enqueue(4);
  assert.deepStrictEqual([q.dequeue(), q.dequeue(), q.dequeue()], [2, 3, 4]);
  assert.strictEqual(q.dequeue(), undefined);
});

test('the queue asks the stack', () => {
  const src = fs.readFileSync(require.resolve('./queue.js'), 'utf8');
  assert.ok(src.includes('isEmpty()'));
  assert.ok(!src.includes('items.length'));
});
