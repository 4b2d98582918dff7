// Bad input gets a clear error of the right class, never a crash, and the next call works.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

import { batchtok, hfTokenizer } from './helpers'

const { Tokenizer, Scheduler } = batchtok
const o200k = Tokenizer.fromEncoding('o200k_base')
const bert = hfTokenizer('bert')
const scratch = mkdtempSync(join(tmpdir(), 'batchtok-errors-'))

type Case = [string, () => unknown, ErrorConstructor, RegExp]

const syncCases: Case[] = [
  ['an unknown encoding', () => Tokenizer.fromEncoding('o300k'), Error, /unknown encoding 'o300k'.*'o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base', 'gpt2'/],
  ['an encoding name that is not a string', () => Tokenizer.fromEncoding(42 as any), TypeError, /name is a number; expected a string/],
  ['a missing tokenizer file', () => Tokenizer.fromFile(join(scratch, 'nope.json')), Error, /cannot read tokenizer file '.*nope\.json'/],
  ['a tokenizer file that is not JSON', () => { const p = join(scratch, 'bad.json'); writeFileSync(p, '{"version": '); return Tokenizer.fromFile(p) }, Error, /bad\.json' is not valid JSON/],
  ['JSON that is not a tokenizer', () => Tokenizer.fromJSON('{"hello": 1}'), Error, /not a tokenizer\.json that Hugging Face tokenizers can read/],
  ['a truncated tokenizer.json', () => Tokenizer.fromJSON(JSON.stringify({ version: '1.0', model: { type: 'BPE' } }).slice(0, -3)), Error, /not valid JSON/],
  ['encode of a number', () => o200k.encode(7 as any), TypeError, /text is a number; expected a string/],
  ['encode of null', () => o200k.encode(null as any), TypeError, /text is null; expected a string/],
  ['encodeBatchSync of a string', () => o200k.encodeBatchSync('abc' as any), TypeError, /texts is a string; expected an array of strings/],
  ['encodeBatchSync of undefined', () => o200k.encodeBatchSync(undefined as any), TypeError, /texts is undefined; expected an array of strings/],
  ['a non-string item, named by index', () => o200k.encodeBatchSync(['a', 'b', 3 as any]), TypeError, /texts\[2\] is a number; expected a string/],
  ['a null item', () => o200k.countBatchSync(['a', null as any]), TypeError, /texts\[1\] is null; expected a string/],
  ['options that are not an object', () => o200k.encode('a', 'all' as any), TypeError, /options is a string; expected an object/],
  ['allowedSpecial of a wrong word', () => o200k.encode('a', { allowedSpecial: 'none' as any }), RangeError, /options\.allowedSpecial is "none"; expected 'all' or an array/],
  ['allowedSpecial naming an unknown token', () => o200k.encode('a', { allowedSpecial: ['<|fim_prefix|>'] }), TypeError, /not a special token of this encoding; its special tokens are <\|endoftext\|>, <\|endofprompt\|>/],
  ['allowedSpecial on a Hugging Face tokenizer', () => bert.encode('a', { allowedSpecial: 'all' }), TypeError, /allowedSpecial applies to the OpenAI encodings/],
  ['addSpecialTokens on an OpenAI encoding', () => o200k.encode('a', { addSpecialTokens: true }), TypeError, /addSpecialTokens applies to Hugging Face tokenizers/],
  ['addSpecialTokens that is not a boolean', () => bert.encode('a', { addSpecialTokens: 1 as any }), TypeError, /options\.addSpecialTokens is a number; expected true or false/],
  ['an out-of-range id in decode', () => o200k.decode([24912, 250000]), RangeError, /id 250000 at index 1 is not in the vocabulary/],
  ['an id near 2^32 in decode', () => o200k.decode(new Uint32Array([4294967295])), RangeError, /id 4294967295 at index 0 is not in the vocabulary/],
  ['a gap in the vocabulary in decode', () => Tokenizer.fromEncoding('cl100k_base').decode([100261]), RangeError, /id 100261 at index 0 is not in the vocabulary/],
  ['a negative id', () => o200k.decode([-1]), RangeError, /ids\[0\] is -1; ids are whole numbers from 0 to 4294967295/],
  ['a fractional id', () => o200k.decode([1.5]), RangeError, /ids\[0\] is 1\.5/],
  ['an id that is not a number', () => o200k.decode(['7' as any]), TypeError, /ids\[0\] is a string; ids are whole numbers/],
  ['ids of the wrong typed array', () => o200k.decode(new Float64Array([1]) as any), TypeError, /ids is an object; expected a Uint32Array or an array of numbers/],
  ['a signal on a sync method', () => o200k.encodeBatchSync(['a'], { signal: new AbortController().signal }), TypeError, /options\.signal needs the async method/],
  ['a scheduler that is not a Scheduler', () => o200k.countBatchSync(['a'], { scheduler: { threads: 2 } as any }), TypeError, /options\.scheduler is an object; expected a Scheduler/],
  ['zero threads', () => new Scheduler({ threads: 0 }), RangeError, /^options\.threads is 0; expected a whole number from 1 to 1024$/],
  ['fractional threads', () => new Scheduler({ threads: 1.5 }), RangeError, /^options\.threads is 1\.5; expected a whole number from 1 to 1024$/],
  ['threads as a string', () => new Scheduler({ threads: '2' as any }), TypeError, /^options\.threads is a string; expected a whole number$/],
  ['an unknown policy', () => new Scheduler({ policy: 'fastest' as any }), RangeError, /^options\.policy is "fastest"; expected one of 'chunked', 'serial', 'rayon', 'rayon-min-len', 'auto'$/],
  ['a policy that is not a string', () => new Scheduler({ policy: 1 as any }), TypeError, /^options\.policy is a number; expected one of 'chunked'/],
  ['releaseMemory that is not a boolean', () => new Scheduler({ releaseMemory: 'yes' as any }), TypeError, /^options\.releaseMemory is a string; expected true or false$/],
  ['Scheduler called without new', () => (Scheduler as any)({ threads: 2 }), TypeError, /^Class constructor Scheduler cannot be invoked without 'new'$/],
  ['Scheduler options that are a number', () => new Scheduler(5 as any), TypeError, /^options is a number; expected an object$/],
  ['a misspelt Scheduler option', () => new Scheduler({ thread: 2 } as any), TypeError, /^options\.thread is not an option of new Scheduler\(\); did you mean 'threads'\?/],
  ['an unknown encode option', () => o200k.encode('a', { allowSpecial: 'all' } as any), TypeError, /^options\.allowSpecial is not an option of encode; did you mean 'allowedSpecial'\?/],
  ['an unknown batch option', () => o200k.encodeBatchSync(['a'], { colour: 1 } as any), TypeError, /^options\.colour is not an option of encodeBatchSync \(options: addSpecialTokens, encodeSpecialTokens, allowedSpecial, disallowedSpecial, signal, scheduler\)$/],
  ['a signal on decode', () => o200k.decode([1], { signal: new AbortController().signal }), TypeError, /options\.signal needs the async method; decode blocks/],
  ['setDefault of something that is not a Scheduler', () => Scheduler.setDefault({} as any), TypeError, /^scheduler is an object; expected a Scheduler/],
  ['an index past the end of a BatchEncoding', () => o200k.encodeBatchSync(['a']).get(1), RangeError, /index 1 is out of range for a BatchEncoding of length 1/],
  ['new Tokenizer()', () => new (Tokenizer as any)(), Error, /./],
]

describe('bad input', () => {
  it.each(syncCases)('%s throws a clear error', (_, call, errorClass, message) => {
    let thrown: unknown
    try {
      call()
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(errorClass)
    expect((thrown as Error).message).toMatch(message)
    // The addon still works after the error.
    expect(Array.from(o200k.encode('hello world'))).toEqual([24912, 2375])
  })

  const asyncCases: [string, () => Promise<unknown>, ErrorConstructor, RegExp][] = [
    ['encodeBatch of null', () => o200k.encodeBatch(null as any), TypeError, /^texts is null; expected an array of strings$/],
    ['encodeBatch of a non-string item', () => o200k.encodeBatch(['a', 2 as any]), TypeError, /^texts\[1\] is a number; expected a string$/],
    ['countBatch with a signal that is not an AbortSignal', () => o200k.countBatch(['a'], { signal: {} as any }), TypeError, /^options\.signal is an object; expected an AbortSignal/],
    ['countBatch with an unknown option', () => o200k.countBatch(['a'], { schedular: null } as any), TypeError, /^options\.schedular is not an option of countBatch; did you mean 'scheduler'\?/],
    ['encodeUtf8Batch of a string', () => o200k.encodeUtf8Batch('abc' as any, [0, 3]), TypeError, /^bytes is a string; expected a Uint8Array/],
    ['countUtf8Batch with offsets past the end', () => o200k.countUtf8Batch(Buffer.from('ab'), [0, 5]), Error, /past the end/],
    ['decodeBatch of a number', () => o200k.decodeBatch(3 as any), TypeError, /^lists is a number; expected an array of id lists$/],
    ['decodeBatch with a bad option', () => o200k.decodeBatch([[1]], { skipSpecialTokens: 'no' as any }), TypeError, /^options\.skipSpecialTokens is a string; expected true or false$/],
    ['encodeBatch with allowedSpecial on a Hugging Face tokenizer', () => bert.encodeBatch(['a'], { allowedSpecial: 'all' }), TypeError, /allowedSpecial applies to the OpenAI encodings/],
  ]

  it.each(asyncCases)('%s rejects, never throws', async (_, call, errorClass, message) => {
    let promise: Promise<unknown> | undefined
    expect(() => {
      promise = call()
    }).not.toThrow()
    const error = await promise!.then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(errorClass)
    expect((error as Error).message).toMatch(message)
  })

  it('rejects when BATCHTOK_THREADS is invalid, naming the variable', () => {
    const script = `const { Tokenizer } = require(${JSON.stringify(fileURLToPath(new URL('./load-addon.cjs', import.meta.url)))});
      Tokenizer.fromEncoding('o200k_base').encodeBatch(['a']).then(
        () => console.log('resolved'),
        (e) => console.log(e.constructor.name + ': ' + e.message))`
    const out = execFileSync(process.execPath, ['-e', script], {
      env: { ...process.env, BATCHTOK_THREADS: 'lots' },
      encoding: 'utf8',
    })
    expect(out).toMatch(/^RangeError: .*BATCHTOK_THREADS/)
  })

  it('rejects the promise for a bad batch argument instead of throwing later', async () => {
    await expect(o200k.encodeBatch([1 as any])).rejects.toThrow(TypeError)
    await expect(o200k.decodeBatch([[1, 2], [999999999]])).rejects.toThrow(/lists\[1\]: id 999999999 at index 0 is not in the vocabulary/)
  })
})

describe('panics inside the addon', () => {
  // `__panicInBatch` and `__panicSync` exist only in the build with the `testing` feature.
  const hooks = require('./load-testing-addon.cjs') as typeof batchtok & {
    __panicInBatch(len: number, panicAt: number): Promise<void>
    __panicSync(): void
  }
  const tokenizer = hooks.Tokenizer.fromEncoding('o200k_base')

  it('reject the batch with an Error naming the item, and the pool keeps working', async () => {
    await expect(hooks.__panicInBatch(500, 321)).rejects.toThrow(/item 321 .*internal error \(test panic at item 321\)/)
    await expect(hooks.__panicInBatch(500, 0)).rejects.toThrow(/item 0 /)
    const batch = await tokenizer.encodeBatch(['after', 'the', 'panics'])
    expect(batch.length).toBe(3)
  })

  it('throw from a sync call instead of aborting the process', () => {
    expect(() => hooks.__panicSync()).toThrow(/test panic in a sync call/)
    expect(Array.from(tokenizer.encode('hello world'))).toEqual([24912, 2375])
  })

  it('are hooks of the testing build only: the release module exports no `__` name', () => {
    expect(Object.keys(hooks).filter((name) => name.startsWith('__')).sort()).toEqual(['__panicInBatch', '__panicSync', '__profileBoundary'])
    for (const name of ['__panicInBatch', '__panicSync', '__profileBoundary']) expect(batchtok).not.toHaveProperty(name)
  })
})
