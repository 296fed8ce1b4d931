/**
 * The preload of bench/write-meter.ts (`node --import`): in a process forked
 * with IPC, counts its Node writes from the start and answers the benchmark's
 * `writeMeter` message with the counts so far.
 */
import { meterNodeWrites, WRITE_METER_MESSAGE, type WriteMeter } from './write-meter.ts';

if (process.send) {
  const meter: WriteMeter = { requests: 0, bodyBytes: 0, ops: 0, testOps: 0, byKind: {} };
  meterNodeWrites(meter);
  process.on('message', (m: unknown) => {
    if (m === WRITE_METER_MESSAGE) process.send?.({ [WRITE_METER_MESSAGE]: meter });
  });
  // Listening must not keep the worker alive once it has stopped.
  process.channel?.unref();
}
