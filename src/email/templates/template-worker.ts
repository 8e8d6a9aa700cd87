import { parentPort } from 'node:worker_threads';
import { type FieldSource, renderFields } from './template-engine';

/** A request from template-sandbox.ts: the fields of one template and the variables of each message. */
export interface WorkerRequest {
  id: number;
  fields: FieldSource[];
  variables: object[];
}

/**
 * A template worker: renders what the sandbox sends it, one request at a time. It has no access to the
 * database, the queue or the logger; the sandbox bounds its time and heap and replaces it when it dies.
 */
parentPort!.on('message', ({ id, fields, variables }: WorkerRequest) => {
  parentPort!.postMessage({ id, results: renderFields(fields, variables) });
});
parentPort!.postMessage({ ready: true });
