'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { countWords } = require('./words.js');

test('counts words case-insensitively', () => {
  const m = countWords('The cat and the hat');
  assert.strictEqual(m.get('the'), 2);
  assert.strictEqual(m.get('cat'), 1);
  assert.strictEqual(m.size, 4);
});

test('keeps apostrophes inside words', () => {
  const m = countWords("Don't stop, 'quoted' words don't");
  assert.strictEqual(m.get("don't"), 2);
  assert.strictEqual(m.get('quoted'), 1);
});

test('nothing', () => {
  assert.strictEqual(countWords(' ,. ').size, 0);
});
