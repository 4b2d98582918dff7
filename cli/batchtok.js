#!/usr/bin/env node
'use strict'
// The batchtok command: `encode` turns corpora into token files, `merge` joins shard outputs.

const { Command, Option, InvalidArgumentError } = require('commander')
const { USAGE_EXIT_CODE } = require('./errors')

/** Parses a positive whole number option. */
function positiveInteger(text) {
  const value = Number(text)
  if (!Number.isInteger(value) || value < 1) throw new InvalidArgumentError('expected a whole number of at least 1')
  return value
}

/** Parses a number option above 0. */
function positive(text) {
  const value = Number(text)
  if (!Number.isFinite(value) || value <= 0) throw new InvalidArgumentError('expected a number above 0')
  return value
}

/** Parses a non-negative number option. */
function nonNegative(text) {
  const value = Number(text)
  if (!Number.isFinite(value) || value < 0) throw new InvalidArgumentError('expected a number of at least 0')
  return value
}

/** Prints an error as its message alone and sets the exit code. */
function fail(error) {
  process.stderr.write(`batchtok: ${error.message}\n`)
  if (process.env.BATCHTOK_CLI_STACK) process.stderr.write(`${error.stack}\n`)
  process.exitCode = error.exitCode ?? 1
}

const program = new Command('batchtok')
  .description('Tokenize corpora into token files for training')
  .showHelpAfterError()
  // A mistake in the command line exits as the CLI's own usage errors do (cli/errors.js), where
  // commander would exit with 1, the code of input that cannot be tokenized. Help exits with 0.
  .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : USAGE_EXIT_CODE))

program
  .command('encode')
  .description('tokenize text, JSONL or Parquet files (gzip or zstd too) into a Megatron-LM indexed dataset, a flat .bin, or token counts')
  .argument('<inputs...>', 'files, globs (quoted), or - for stdin')
  .requiredOption('-o, --output <prefix>', 'output prefix: writes PREFIX.bin and PREFIX.idx (megatron), PREFIX.bin (flat), or PREFIX.jsonl (--count-only)')
  .option('--encoding <name>', 'an OpenAI encoding, e.g. o200k_base')
  .option('--model <name>', "a model of tiktoken's table, e.g. gpt-4o")
  .option('--tokenizer <path>', "a Hugging Face tokenizer.json, a model folder, or a Hub id in the local Hugging Face cache")
  .option('--tiktoken <file>', "a rank file in tiktoken's format (.tiktoken, Llama 3's tokenizer.model), with --pattern")
  .option('--pattern <regex>', "--tiktoken's regex that splits text (tiktoken's pat_str)")
  .option('--special-tokens <json>', '--tiktoken\'s special tokens, e.g. \'{"<|end_of_text|>": 128001}\'')
  .option('--tekken <file>', "Mistral's tekken.json")
  .addOption(new Option('--format <format>', 'input format; auto goes by the extension (.jsonl, .parquet, else text)').choices(['auto', 'text', 'jsonl', 'parquet']).default('auto'))
  .option('--field <name>', 'the text field of JSONL records or the text column of Parquet', 'text')
  .option('--doc-per-file', 'each file is one document (default: one document per line of text)')
  .addOption(new Option('--output-format <format>', 'megatron: .bin + .idx as Megatron-LM reads them; flat: one .bin of ids as nanoGPT writes').choices(['megatron', 'flat']).default('megatron'))
  .option('--count-only', 'write {"tokens": N} per document to PREFIX.jsonl instead of ids')
  .option('--append-eos', "append the end-of-text token after each document (<|endoftext|> for OpenAI encodings, </s> for --tekken, a model folder's eos_token)")
  .option('--eos-token <text>', 'the token --append-eos appends')
  .option('--threads <n>', 'threads that encode (default: all cores)', positiveInteger)
  .option('--shard <i/n>', 'read shard i of n (0-based) of the inputs; join the shard outputs with merge')
  .option('--checkpoint-seconds <s>', 'seconds between checkpoints (0: after every batch)', nonNegative, 10)
  .option('--batch-mib <mib>', 'MiB of text per batch (default 1)', positive)
  .option('--summary', 'print a JSON summary (documents, tokens, bytes, seconds) on stdout at the end')
  .option('--force', 'overwrite finished outputs and discard a checkpoint of another command')
  .option('-q, --quiet', 'no progress on stderr')
  .action(async (inputs, options) => {
    const { runEncode } = require('./encode')
    const summary = await runEncode(inputs, options)
    if (options.summary) process.stdout.write(`${JSON.stringify(summary)}\n`)
  })

program
  .command('merge')
  .description('join shard outputs, in shard order, into one dataset equal to a single run')
  .argument('<shards...>', 'the output prefixes of the shards, in order (shard 0 first)')
  .requiredOption('-o, --output <prefix>', 'prefix of the merged output')
  .option('--force', 'overwrite an existing merged output')
  .option('--summary', 'print a JSON summary on stdout')
  .action((shards, options) => {
    const { runMerge } = require('./merge')
    const summary = runMerge(shards, options)
    if (options.summary) process.stdout.write(`${JSON.stringify(summary)}\n`)
  })

program.parseAsync(process.argv).catch(fail)
