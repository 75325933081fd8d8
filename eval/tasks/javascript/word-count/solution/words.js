'use strict';

function countWords(text) {
  const counts = new Map();
  for (const raw of text.toLowerCase().match(/[a-z0-9']+/g) || []) {
    const word = raw.replace(/^'+|'+$/g, '');
    if (word) counts.set(word, (counts.get(word) || 0) + 1);
  }
  return counts;
}

module.exports = { countWords };
