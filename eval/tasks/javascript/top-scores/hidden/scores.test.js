'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { topScores } = require('./scores.js');

test('numbers are compared as numbers', () => {
  assert.deepStrictEqual(topScores([9, 100, 25, 3], 2), [100, 25]);
});

test('the input is left alone', () => {
  const s = [1, 3, 2];
  topScores(s, 3);
  assert.deepStrictEqual(s, [1, 3, 2]);
});

test('n past the end', () => {
  assert.deepStrictEqual(topScores([5], 3), [5]);
});
