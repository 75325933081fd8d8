'use strict';

function topScores(scores, n) {
  return [...scores].sort((a, b) => b - a).slice(0, n);
}

module.exports = { topScores };
