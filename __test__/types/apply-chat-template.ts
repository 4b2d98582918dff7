// Compiled by chat-template.spec.ts with `tsc --noEmit --strict`, never run: the package's types
// give Tokenizer an applyChatTemplate whose result type follows `tokenize`.
import { Tokenizer, type ApplyChatTemplateOptions, type ChatTemplateMessage } from 'batchtok'

const tokenizer = Tokenizer.fromFile('tokenizer.json')
const messages: ChatTemplateMessage[] = [{ role: 'user', content: 'hi' }]
export const text: string = tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true, enable_thinking: false })
export const ids: Uint32Array = tokenizer.applyChatTemplate(messages, { tokenize: true })
const options: ApplyChatTemplateOptions = { tools: [{ type: 'function' }], continueFinalMessage: 'reasoning_content' }
export const either: string | Uint32Array = tokenizer.applyChatTemplate(messages, options)
export const count: number = tokenizer.count(text)
// @ts-expect-error: a message has a role
tokenizer.applyChatTemplate([{ content: 'hi' }])
// @ts-expect-error: with tokenize: true the result is ids, not text
export const wrong: string = tokenizer.applyChatTemplate(messages, { tokenize: true })
