import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { LocalStorageDriver } from './local-storage.driver';

describe('LocalStorageDriver', () => {
  let root: string;
  let driver: LocalStorageDriver;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'storage-'));
    driver = new LocalStorageDriver(root);
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('stores, reads and deletes an object under nested keys', async () => {
    await driver.put('tickets/app-1/abc/f00d', Buffer.from('hello'), 'text/plain');
    expect(await readFile(join(root, 'tickets/app-1/abc/f00d'), 'utf8')).toBe('hello');
    const stored = await driver.get('tickets/app-1/abc/f00d');
    expect(stored?.size).toBe(5);
    expect(await text(stored!.body)).toBe('hello');
    await driver.delete('tickets/app-1/abc/f00d');
    expect(await driver.get('tickets/app-1/abc/f00d')).toBeNull();
  });

  it('answers null for a missing key and deletes missing keys without error', async () => {
    expect(await driver.get('nothing/here')).toBeNull();
    await expect(driver.delete('nothing/here')).resolves.toBeUndefined();
  });

  it.each(['../escape', 'a/../../b', '/etc/passwd', 'a//b', '.hidden', 'a/./b', 'a\\b', ''])(
    'refuses the unsafe key %p',
    async (key) => {
      await expect(driver.put(key, Buffer.from('x'), 'text/plain')).rejects.toThrow(/Unsafe storage key/);
      await expect(driver.get(key)).rejects.toThrow(/Unsafe storage key/);
    },
  );
});
