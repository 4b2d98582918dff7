#!/usr/bin/env node
// Writes __test__/fixtures/chat.json: gpt-tokenizer's `encodeChat` ids for a set of
// conversations, for each OpenAI chat model batchtok encodes chats for. batchtok's `encode_chat`
// promises the same ids; the Rust test `engine::chat` compares them.
//
// gpt-tokenizer is pinned in package.json (devDependencies); run `npm ci` first, then
// `node scripts/chat-fixtures.js`. Running it twice writes the same bytes.
'use strict'

const fs = require('node:fs')
const path = require('node:path')

const version = require('gpt-tokenizer/package.json').version

// Models of gpt-tokenizer's chat-enabled list that tiktoken's model table also knows, covering
// its three chat layouts (gpt-3.5: newline separators; gpt-oss: Harmony; the rest: <|im_sep|>)
// and their three encodings.
const MODELS = [
  'gpt-3.5-turbo', 'gpt-3.5-turbo-0125', 'gpt-3.5-turbo-16k-0613', 'gpt-3.5',
  'gpt-4', 'gpt-4-0613', 'gpt-4-32k', 'gpt-4-turbo', 'gpt-4-turbo-2024-04-09',
  'gpt-4o', 'gpt-4o-mini', 'gpt-4o-2024-08-06', 'chatgpt-4o-latest',
  'gpt-4.1', 'gpt-4.1-mini', 'gpt-4.5-preview', 'gpt-5', 'gpt-5-mini', 'gpt-5.1',
  'o1', 'o1-mini', 'o3', 'o3-mini', 'o4-mini',
  'gpt-oss-20b', 'gpt-oss-120b',
]

// Each conversation leans on one thing a chat layout has to get right.
const CONVERSATIONS = {
  'one-user-message': [{ role: 'user', content: 'Hello, world!' }],
  'system-user-assistant': [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'What is 2 + 2?' },
    { role: 'assistant', content: '2 + 2 = 4.' },
    { role: 'user', content: 'And times three?' },
  ],
  'names-replace-roles': [
    { role: 'system', content: 'You translate corporate jargon into plain English.' },
    { role: 'system', name: 'example_user', content: 'New synergies will help drive top-line growth.' },
    { role: 'system', name: 'example_assistant', content: 'Things working well together will increase revenue.' },
    { role: 'user', name: 'Zoë', content: 'Circle back later?' },
  ],
  'empty-content': [
    { role: 'user', content: '' },
    { role: 'assistant', content: '' },
  ],
  'unicode-and-white-space': [
    { role: 'user', content: '日本語のテキスト 🦀🦀 and Ελληνικά\n\n  indented\tline  \r\n' },
    { role: 'assistant', content: '  leading and trailing spaces  ' },
  ],
  'other-roles': [
    { role: 'developer', content: 'Answer in JSON.' },
    { role: 'tool', content: '{"temperature": 21.5, "unit": "C"}' },
    { role: 'function', name: 'get_weather', content: 'sunny' },
  ],
  'long-content': [
    { role: 'user', content: 'The quick brown fox jumps over the lazy dog. '.repeat(8) },
  ],
  // Harmony's header fields; ChatML ignores them.
  'harmony-headers': [
    { role: 'developer', content: '# Instructions\nAnswer briefly.' },
    { role: 'assistant', channel: 'analysis', content: 'The user wants the weather.' },
    { role: 'assistant', channel: 'commentary', recipient: 'functions.get_weather', constraint: 'json', content: '{"city":"Paris"}', terminator: '<|call|>' },
    { name: 'functions.get_weather', role: 'tool', channel: 'commentary', recipient: 'assistant', recipientPlacement: 'role', content: '{"sunny":true}' },
    { role: 'assistant', channel: 'final', content: 'Sunny.', terminator: '<|return|>' },
    { role: 'user', recipient: 'functions.lookup', channel: '', constraint: '', content: 'x' },
  ],
  'no-messages': [],
}

const models = {}
for (const model of MODELS) {
  const { encodeChat } = require(`gpt-tokenizer/model/${model}`)
  const chats = {}
  for (const [name, messages] of Object.entries(CONVERSATIONS)) {
    chats[name] = encodeChat(messages)
  }
  models[model] = chats
}

// One conversation or id list per line keeps the file readable in a diff.
const lines = [
  '{',
  `  "conversations": {`,
  Object.entries(CONVERSATIONS)
    .map(([name, messages]) => `    ${JSON.stringify(name)}: ${JSON.stringify(messages)}`)
    .join(',\n'),
  '  },',
  `  "models": {`,
  Object.entries(models)
    .map(
      ([model, chats]) =>
        `    ${JSON.stringify(model)}: {\n` +
        Object.entries(chats)
          .map(([name, ids]) => `      ${JSON.stringify(name)}: ${JSON.stringify(ids)}`)
          .join(',\n') +
        '\n    }',
    )
    .join(',\n'),
  '  },',
  `  "reference": {"gpt-tokenizer": ${JSON.stringify(version)}}`,
  '}',
  '',
]
const out = path.join(__dirname, '..', '__test__', 'fixtures', 'chat.json')
fs.writeFileSync(out, lines.join('\n'))
console.error(`[chat-fixtures] wrote ${path.relative(process.cwd(), out)} (${fs.statSync(out).size} bytes)`)
