'use strict';

function topScores(scores, n) {
  return scores.sort().reverse().slice(0, n);
}

module.exports = { topScores };
