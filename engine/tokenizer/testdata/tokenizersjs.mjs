// tokenizersjs.mjs runs the reference: Hugging Face tokenizers.js on a
// tokenizer folder, over a JSON array of strings.
//
//   node tokenizersjs.mjs NPM_DIR TOKENIZER_DIR CORPUS.json [PASSES]
//
// NPM_DIR is the folder `make deps-npm` installs into (it holds
// node_modules/@huggingface/tokenizers). Writes the JSON array of token-id
// arrays (no special tokens added) to stdout. With PASSES > 0 it instead
// times PASSES encodes of the whole corpus after one warm-up pass and
// prints {"tokens":…, "seconds":…, "tokens_per_second":…}.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [npmDir, tokDir, corpusPath, passesArg] = process.argv.slice(2);
if (!npmDir || !tokDir || !corpusPath) {
  console.error("usage: node tokenizersjs.mjs NPM_DIR TOKENIZER_DIR CORPUS.json [PASSES]");
  process.exit(2);
}
const lib = path.join(npmDir, "node_modules", "@huggingface", "tokenizers", "dist", "tokenizers.mjs");
const { Tokenizer } = await import(pathToFileURL(lib).href);
const read = (f) => JSON.parse(fs.readFileSync(path.join(tokDir, f), "utf8"));
const tok = new Tokenizer(read("tokenizer.json"), read("tokenizer_config.json"));
const corpus = JSON.parse(fs.readFileSync(corpusPath, "utf8"));
const encode = (s) => tok.encode(s, { add_special_tokens: false }).ids;

const passes = Number(passesArg ?? 0);
if (passes > 0) {
  let tokens = 0;
  for (const s of corpus) tokens += encode(s).length; // warm-up
  const t0 = process.hrtime.bigint();
  for (let p = 0; p < passes; p++) for (const s of corpus) encode(s);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  process.stdout.write(JSON.stringify({ tokens: tokens * passes, seconds, tokens_per_second: (tokens * passes) / seconds }) + "\n");
} else {
  process.stdout.write(JSON.stringify(corpus.map(encode)));
}
