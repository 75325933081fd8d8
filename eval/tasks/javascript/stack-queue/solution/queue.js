'use strict';
const { Stack } = require('./stack.js');

class Queue {
  constructor() {
    this.inbox = new Stack();
    this.outbox = new Stack();
  }
  enqueue(x) {
    this.inbox.push(x);
  }
  dequeue() {
    if (this.outbox.isEmpty()) {
      while (!this.inbox.isEmpty()) this.outbox.push(this.inbox.pop());
    }
    return this.outbox.pop();
  }
}

module.exports = { Queue };
