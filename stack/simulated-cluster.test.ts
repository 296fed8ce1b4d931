import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { graceSeconds } from './simulated-cluster.ts';

describe('the node lifecycle grace period of a simulated cluster', () => {
  it("stays at Kubernetes' 50 s for the kubelet-like defaults and grows with long heartbeats", () => {
    assert.equal(graceSeconds({ heartbeatSeconds: 20, leaseSeconds: 40 }), 50, 'Leases renewed every 10 s');
    assert.equal(graceSeconds({ heartbeatSeconds: 20, leaseSeconds: 0 }), 55, 'status every 22 s at most');
    assert.equal(graceSeconds({ heartbeatSeconds: 60, leaseSeconds: 0 }), 165);
    assert.equal(graceSeconds({ heartbeatSeconds: 60, leaseSeconds: 400 }), 165, 'the status heartbeat comes more often than the Lease');
    assert.equal(graceSeconds({ heartbeatSeconds: 0, leaseSeconds: 0 }), 50, 'no heartbeat at all');
  });
});
