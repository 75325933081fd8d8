'use strict';

function countWords(text) {
  throw new Error('not implemented');
}

module.exports = { countWords };
